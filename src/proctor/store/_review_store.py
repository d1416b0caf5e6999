"""Review runs: the frozen manifest, saved batches, the execution slot (REV-1, REV-5…7).

A run's manifest is built inside the database in one statement per page of the source
table: the sources of the scope and time range that are new, revised or unfinished for
the run's stages (or every source of the range for a reanalyze run), in conversation
order, already cut into batches. Saving a batch checks, in the same transaction, that
the run is still ``running``: output that arrives after a pause or cancel is dropped.

The one execution slot (REV-6) is a single row claimed in a transaction; its holder is
``host:pid`` with a heartbeat, so a slot held by a process that died is taken over, and
the runs it left ``running`` become ``failed`` with their saved batches intact.

Which sources enter a manifest, their batches, whether a holder is alive and which slot a
run may take are decided by ``proctor.graph``'s manifest policy (pure functions: this
module reads the values they need and executes the decision in its transaction).

On PostgreSQL (scale-out, STO-2) there are ``PROCTOR_REVIEW_SLOTS`` slot rows (default 8)
and the slot is per scope: two runs of one scope never execute at once, runs of different
scopes do, up to that many. Every slot change there first takes one transaction-scoped
advisory lock, so claims from many worker processes are serialised like SQLite's
``BEGIN IMMEDIATE`` serialises them. A claimed run can be handed to another process
(``handed_by``): the API claims the slot in the request, a worker takes it over.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import (
    Text,
    and_,
    bindparam,
    case,
    cast,
    exists,
    func,
    insert,
    literal,
    not_,
    or_,
    select,
    text,
    true,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from proctor._util.clock import utcnow
from proctor.errors import BusyError, ConfigError, NotFoundError, ReviewStateError
from proctor.graph import SlotHolder, blocking_holder, choose_slot, holder_alive, manifest_rule
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._review_records import (
    BatchInput,
    ManifestEntry,
    ReviewRunRecord,
    ReviewScope,
    SavedBatch,
    SourceContents,
)
from proctor.store._statistics import LARGE_WRITE_ROWS, refresh_statistics

if TYPE_CHECKING:
    from proctor.transcript import Conversation

# The row converters (``_rows``, and with them the transcript's types) are imported where a
# batch's or a merge's sources are read: a review that finds nothing new never loads them.


class ScopeSpan(NamedTuple):
    """What a review scope holds, for saying why a review found nothing to read."""

    sources: int
    """Every source of the scope's project (or of every project), whatever its time."""
    in_range: int
    """Those inside the scope's time range."""
    oldest: datetime | None
    newest: datetime | None


_OWNER = f"{socket.gethostname()}:{os.getpid()}"


SLOTS_VARIABLE = "PROCTOR_REVIEW_SLOTS"
"""How many reviews of different scopes may execute at once on PostgreSQL."""

DEFAULT_POSTGRES_SLOTS = 8

_SLOT_LOCK_KEY = 0x70726F63  # "proc": the advisory lock every slot change takes on PostgreSQL


def slot_owner() -> str:
    """This process as a slot holder."""
    return _OWNER


def review_slot_count(dialect: str) -> int:
    """How many slots there are: one on SQLite (REV-6), ``PROCTOR_REVIEW_SLOTS`` elsewhere."""
    if dialect == "sqlite":
        return 1
    raw = os.environ.get(SLOTS_VARIABLE, str(DEFAULT_POSTGRES_SLOTS))
    if not raw.strip().isdigit() or int(raw) < 1:
        raise ConfigError(f"{SLOTS_VARIABLE}={raw!r} is not a whole number of slots of at least 1")
    return int(raw)


def _serialise_slot_changes(conn: Connection) -> None:
    """On PostgreSQL, one slot change at a time across every process (SQLite: BEGIN IMMEDIATE)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SLOT_LOCK_KEY})


def _live_slots(conn: Connection, now: datetime) -> list[SlotHolder]:
    """The slot rows a live process holds, with their run's scope, in slot order."""
    rows = conn.execute(
        select(
            t.review_slot.c.slot,
            t.review_slot.c.run_id,
            t.review_slot.c.owner,
            t.review_slot.c.heartbeat_at,
            t.review_runs.c.scope_key,
        )
        .select_from(
            t.review_slot.outerjoin(t.review_runs, t.review_runs.c.run_id == t.review_slot.c.run_id)
        )
        .where(t.review_slot.c.run_id.is_not(None))
        .order_by(t.review_slot.c.slot)
    ).all()
    holders = [
        SlotHolder(int(r.slot), r.run_id, r.owner, r.heartbeat_at, r.scope_key) for r in rows
    ]
    return [h for h in holders if _owner_alive(h.owner, h.heartbeat_at, now)]


def _busy(holder: SlotHolder) -> BusyError:
    return BusyError(
        f"BUSY: review run {holder.run_id[:8]} ({holder.scope_key or 'unknown scope'}) holds the "
        "one review slot; wait for it to finish, or pause or cancel it first"
    )


def _owner_alive(owner: str | None, heartbeat_at: datetime | None, now: datetime) -> bool:
    return holder_alive(
        owner, heartbeat_at, now, host=socket.gethostname(), process_exists=_process_exists
    )


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _entry(r: Any) -> ManifestEntry:
    return ManifestEntry(
        r.position,
        r.source_type,
        r.source_id,
        r.conversation_id,
        r.fingerprint,
        r.occurred_at,
        r.batch_no,
        r.state,
    )


def _run(row: Any) -> ReviewRunRecord:
    m = row._mapping
    return ReviewRunRecord(**{name: m[name] for name in ReviewRunRecord.__slots__})


class ReviewStore(Repository):
    """Review runs, manifests, batches, checkpoints and the execution slot."""

    # -- runs -------------------------------------------------------------------------

    def create_review_run(
        self,
        scope: ReviewScope,
        *,
        trigger: str,
        reanalyze: bool,
        stages: Sequence[str],
        batch_size: int,
        batch_chars: int,
        connection: str | None,
        model: str | None,
        options: dict[str, Any] | None = None,
    ) -> ReviewRunRecord:
        """Freeze scope and range, build the manifest and its batches: one transaction.

        ``stages`` are the checkpoint stages this run advances (``structural`` always,
        ``semantic`` when a model is configured); a source is pending when any of them
        lacks a checkpoint at its current fingerprint. A reanalyze run takes every source
        of the range and reads no checkpoint.
        """
        run_id = str(uuid.uuid4())
        now = utcnow()
        with self._write() as conn:
            conn.execute(
                insert(t.review_runs).values(
                    run_id=run_id,
                    scope_key=scope.key,
                    project_id=scope.project_id,
                    time_from=scope.time_from,
                    time_to=scope.time_to,
                    trigger=trigger,
                    reanalyze=reanalyze,
                    status="running",
                    active=False,
                    connection=connection,
                    model=model,
                    options={
                        **(options or {}),
                        "stages": list(stages),
                        "batch_size": batch_size,
                        "batch_chars": batch_chars,
                    },
                    sources_total=0,
                    sources_done=0,
                    batches_total=0,
                    batches_done=0,
                    model_calls=0,
                    input_tokens=0,
                    output_tokens=0,
                    created_at=now,
                    updated_at=now,
                )
            )
            total = _build_manifest(conn, run_id, scope, stages, reanalyze, batch_size, batch_chars)
            if total >= LARGE_WRITE_ROWS:
                refresh_statistics(conn, ["review_manifest"])
            counts = conn.execute(
                select(t.review_manifest.c.batch_no, func.count())
                .where(t.review_manifest.c.run_id == run_id)
                .group_by(t.review_manifest.c.batch_no)
                .order_by(t.review_manifest.c.batch_no)
            ).all()
            batches = len(counts)
            if counts:
                conn.execute(
                    insert(t.review_batches),
                    [
                        {
                            "run_id": run_id,
                            "batch_no": batch_no,
                            "state": "pending",
                            "sources": count,
                            "model_calls": 0,
                            "input_tokens": 0,
                            "output_tokens": 0,
                        }
                        for batch_no, count in counts
                    ],
                )
            conn.execute(
                update(t.review_runs)
                .where(t.review_runs.c.run_id == run_id)
                .values(sources_total=total, batches_total=batches)
            )
            row = conn.execute(select(t.review_runs).where(t.review_runs.c.run_id == run_id)).one()
        return _run(row)

    def review_run(self, run_id: str) -> ReviewRunRecord:
        """One run by id or unique prefix."""
        with self._read() as conn:
            full = _resolve_run_id(conn, run_id)
            row = conn.execute(select(t.review_runs).where(t.review_runs.c.run_id == full)).one()
        return _run(row)

    def review_runs(self, *, limit: int = 20, status: str | None = None) -> list[ReviewRunRecord]:
        """Runs, newest first."""
        query = select(t.review_runs).order_by(t.review_runs.c.created_at.desc()).limit(limit)
        if status is not None:
            query = query.where(t.review_runs.c.status == status)
        with self._read() as conn:
            return [_run(row) for row in conn.execute(query)]

    def set_review_status(
        self,
        run_id: str,
        status: str,
        *,
        allowed_from: Iterable[str] | None = None,
        error: str | None = None,
        finished: bool = False,
    ) -> ReviewRunRecord:
        """Move a run to ``status`` (only from ``allowed_from`` when given): one transaction."""
        now = utcnow()
        with self._write() as conn:
            full = _resolve_run_id(conn, run_id)
            current = conn.execute(
                select(t.review_runs.c.status).where(t.review_runs.c.run_id == full)
            ).scalar_one()
            allowed = None if allowed_from is None else frozenset(allowed_from)
            if allowed is not None and current not in allowed:
                raise ReviewStateError(
                    f"review run {full[:8]} is {current}; it cannot become {status} "
                    f"(only from {', '.join(sorted(allowed))})"
                )
            values: dict[str, Any] = {"status": status, "updated_at": now}
            if error is not None:
                values["error"] = error
            if finished:
                values["finished_at"] = now
            conn.execute(update(t.review_runs).where(t.review_runs.c.run_id == full).values(values))
            row = conn.execute(select(t.review_runs).where(t.review_runs.c.run_id == full)).one()
        return _run(row)

    def add_review_usage(
        self, run_id: str, *, calls: int, input_tokens: int, output_tokens: int
    ) -> None:
        """Count model usage that was not part of a saved batch (the merge)."""
        with self._write() as conn:
            conn.execute(
                update(t.review_runs)
                .where(t.review_runs.c.run_id == run_id)
                .values(
                    model_calls=t.review_runs.c.model_calls + calls,
                    input_tokens=t.review_runs.c.input_tokens + input_tokens,
                    output_tokens=t.review_runs.c.output_tokens + output_tokens,
                    updated_at=utcnow(),
                )
            )

    def fail_interrupted_reviews(self) -> list[str]:
        """Runs left ``running`` by a process that stopped become ``failed`` (REV-5).

        Their saved batches stay; ``resume`` continues them. A run whose worker is alive
        (it holds the slot) is left alone.
        """
        now = utcnow()
        with self._write() as conn:
            _serialise_slot_changes(conn)
            live_runs = {slot.run_id for slot in _live_slots(conn, now)}
            query = select(t.review_runs.c.run_id).where(
                or_(t.review_runs.c.status == "running", t.review_runs.c.active.is_(True))
            )
            stale = [r for (r,) in conn.execute(query) if r not in live_runs]
            for run_id in stale:
                conn.execute(
                    update(t.review_runs)
                    .where(t.review_runs.c.run_id == run_id, t.review_runs.c.status == "running")
                    .values(
                        status="failed",
                        error="interrupted: the process running this review stopped; resume it",
                        updated_at=now,
                    )
                )
                conn.execute(
                    update(t.review_runs)
                    .where(t.review_runs.c.run_id == run_id)
                    .values(active=False)
                )
        return stale

    # -- the execution slot (REV-6) ----------------------------------------------------

    def claim_review_slot(
        self, run_id: str, *, resumable_from: Iterable[str] = (), handed_by: str | None = None
    ) -> ReviewRunRecord:
        """Take a slot for ``run_id`` and mark the run running and active.

        Raises ``BusyError`` at once when a live process holds the slot the run needs (on
        PostgreSQL: a slot of the same scope, or every slot). ``resumable_from`` lists the
        states the run may be resumed from (empty: it must be ``running``). ``handed_by``
        names the process that claimed the run and hands it over (``host:pid``): its slot
        is taken over; a run held by any other live process is BUSY.
        """
        now = utcnow()
        owner = slot_owner()
        allowed = frozenset({"running", *resumable_from})
        with self._write() as conn:
            _serialise_slot_changes(conn)
            scope = conn.execute(
                select(t.review_runs.c.scope_key).where(t.review_runs.c.run_id == run_id)
            ).scalar()
            choice = choose_slot(
                run_id,
                scope,
                _live_slots(conn, now),
                review_slot_count(conn.dialect.name),
                owner=owner,
                handed_by=handed_by,
            )
            if choice.already_running_in is not None:
                raise BusyError(
                    f"BUSY: review run {run_id[:8]} is already executing in "
                    f"{choice.already_running_in}; wait for it to stop"
                )
            if choice.busy is not None:
                raise _busy(choice.busy)
            assert choice.slot is not None  # neither BUSY: the policy chose a slot
            slot_no = choice.slot
            row_of_slot = select(t.review_slot.c.slot).where(t.review_slot.c.slot == slot_no)
            if conn.execute(row_of_slot).first() is None:
                conn.execute(insert(t.review_slot).values(slot=slot_no))
            status = conn.execute(
                select(t.review_runs.c.status).where(t.review_runs.c.run_id == run_id)
            ).scalar()
            if status is None:
                raise NotFoundError(f"no review run {run_id!r}")
            if status not in allowed:
                raise ReviewStateError(
                    f"review run {run_id[:8]} is {status} and cannot run"
                    + ("; a cancelled run cannot be resumed" if status == "cancelled" else "")
                )
            conn.execute(
                update(t.review_slot)
                .where(t.review_slot.c.slot == slot_no)
                .values(run_id=run_id, owner=owner, acquired_at=now, heartbeat_at=now)
            )
            conn.execute(
                update(t.review_runs)
                .where(t.review_runs.c.run_id == run_id)
                .values(status="running", active=True, error=None, updated_at=now, finished_at=None)
            )
            row = conn.execute(select(t.review_runs).where(t.review_runs.c.run_id == run_id)).one()
        return _run(row)

    def review_slot_holder(self, scope_key: str | None = None) -> str | None:
        """The live run holding the slot a run of ``scope_key`` would need, if any.

        On SQLite (one slot) that is the one holder whatever the scope. On PostgreSQL:
        the live run of the same scope, or the oldest slot's run when every slot is
        taken; without ``scope_key``, any live holder.
        """
        with self._read() as conn:
            live = _live_slots(conn, utcnow())
            capacity = review_slot_count(conn.dialect.name)
        holder = blocking_holder(scope_key, live, capacity)
        return None if holder is None else str(holder.run_id)

    def review_slot_held(self, run_id: str) -> bool:
        """Whether a live process holds a slot for ``run_id`` (it is executing)."""
        with self._read() as conn:
            return any(slot.run_id == run_id for slot in _live_slots(conn, utcnow()))

    def beat_review_slot(self, run_id: str) -> None:
        """Keep the slot: the holder is still working."""
        with self._write() as conn:
            conn.execute(
                update(t.review_slot)
                .where(t.review_slot.c.run_id == run_id)
                .values(heartbeat_at=utcnow())
            )

    def release_review_slot(self, run_id: str) -> ReviewRunRecord:
        """Work on the run has stopped: free the slot and clear ``active``."""
        with self._write() as conn:
            _serialise_slot_changes(conn)
            conn.execute(
                update(t.review_slot)
                .where(t.review_slot.c.run_id == run_id)
                .values(run_id=None, owner=None, acquired_at=None, heartbeat_at=None)
            )
            conn.execute(
                update(t.review_runs)
                .where(t.review_runs.c.run_id == run_id)
                .values(active=False, updated_at=utcnow())
            )
            row = conn.execute(select(t.review_runs).where(t.review_runs.c.run_id == run_id)).one()
        return _run(row)

    # -- manifest and batches ----------------------------------------------------------

    def manifest_page(self, run_id: str, batch_no: int) -> list[ManifestEntry]:
        """The manifest entries of one batch, in order."""
        with self._read() as conn:
            return _manifest_page(conn, run_id, batch_no)

    def review_batch_input(self, run_id: str, batch_no: int) -> BatchInput:
        """The run's status, one batch's manifest entries and their sources' content, read
        in one snapshot (one read per batch instead of three)."""
        with self._read() as conn:
            status = conn.execute(_RUN_STATUS, {"run": run_id}).scalar_one()
            if status != "running":
                return BatchInput(str(status), [], _source_contents(conn, []))
            entries = _manifest_page(conn, run_id, batch_no)
            keys = [(e.source_type, e.source_id) for e in entries]
            page = {"run": run_id, "batch": batch_no}
            return BatchInput(str(status), entries, _source_contents(conn, keys, page))

    def review_batches(self, run_id: str) -> list[SavedBatch]:
        """Every batch of a run with its state and saved output."""
        b = t.review_batches
        with self._read() as conn:
            rows = conn.execute(select(b).where(b.c.run_id == run_id).order_by(b.c.batch_no)).all()
        return [
            SavedBatch(
                r.batch_no,
                r.state,
                r.sources,
                r.output,
                r.error,
                r.model_calls,
                r.input_tokens,
                r.output_tokens,
            )
            for r in rows
        ]

    def save_review_batch(
        self,
        run_id: str,
        batch_no: int,
        *,
        state: str,
        output: dict[str, Any] | None,
        error: str | None,
        read: dict[tuple[str, str], str],
        omitted: Sequence[tuple[str, str]],
        model_calls: int,
        input_tokens: int,
        output_tokens: int,
    ) -> bool:
        """Save a batch's outcome if the run is still running; False (nothing saved) if not.

        ``read`` maps (source_type, source_id) to the fingerprint actually read; those
        manifest entries become ``done`` at that version. ``omitted`` sources vanished
        with their conversation. Model usage is counted either way: it was spent. The
        slot the run holds is beaten in the same transaction (the holder is working).

        The statements sent are the same few whatever the batch's size: each kind of
        manifest change is one ``executemany``, and the run's counts move by this batch's
        difference.
        """
        from proctor.store._review_batch_save import save_batch  # not for a no-change run

        with self._write() as conn:
            return save_batch(
                conn,
                run_id,
                batch_no,
                state=state,
                output=output,
                error=error,
                read=read,
                omitted=omitted,
                usage=(model_calls, input_tokens, output_tokens),
                now=utcnow(),
            )

    def manifest_counts(self, run_id: str) -> dict[str, int]:
        """How many manifest entries are pending, done and omitted."""
        m = t.review_manifest
        with self._read() as conn:
            rows = conn.execute(
                select(m.c.state, func.count()).where(m.c.run_id == run_id).group_by(m.c.state)
            ).all()
        return {str(state): int(count) for state, count in rows}

    def done_manifest(self, run_id: str) -> list[ManifestEntry]:
        """Entries read by the run, for its checkpoints."""
        m = t.review_manifest
        with self._read() as conn:
            rows = conn.execute(
                select(m).where(m.c.run_id == run_id, m.c.state == "done").order_by(m.c.position)
            ).all()
        return [_entry(r) for r in rows]

    def done_sources(self, run_id: str) -> list[tuple[str, str, str, int]]:
        """(source_type, source_id, fingerprint, batch_no) of every entry the run read, in
        manifest order: what its checkpoints need, without converting a row per entry."""
        m = t.review_manifest.c
        with self._read() as conn:
            rows = conn.execute(
                select(m.source_type, m.source_id, m.fingerprint, m.batch_no)
                .where(m.run_id == run_id, m.state == "done")
                .order_by(m.position)
            ).all()
        return [(str(a), str(b), str(c), int(d)) for a, b, c, d in rows]

    def checkpoint_count(self, stage: str | None = None) -> int:
        """How many checkpoints exist (of one stage)."""
        c = t.review_checkpoints
        query = select(func.count()).select_from(c)
        if stage is not None:
            query = query.where(c.c.stage == stage)
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())

    def scope_span(self, scope: ReviewScope) -> ScopeSpan:
        """How many sources the scope holds in its time range, and when all of them date from.

        A source's time is the one a manifest uses: when it happened, else when its
        conversation started.
        """
        s, conv = t.sources, t.conversations
        when = func.coalesce(s.c.occurred_at, conv.c.started_at, type_=t.UTCDateTime())
        bounds: list[ColumnElement[bool]] = []
        if scope.time_from is not None:
            bounds.append(when >= scope.time_from)
        if scope.time_to is not None:
            bounds.append(when < scope.time_to)
        in_range = and_(true(), *bounds)
        query = select(
            func.count(),
            func.coalesce(func.sum(case((in_range, 1), else_=0)), 0),
            func.min(when),
            func.max(when),
        ).select_from(s.join(conv, conv.c.conversation_id == s.c.conversation_id))
        if scope.project_id is not None:
            query = query.where(conv.c.project_id == scope.project_id)
        with self._read() as conn:
            total, ranged, oldest, newest = conn.execute(query).one()
        return ScopeSpan(int(total), int(ranged), oldest, newest)

    def review_conversations(self, ids: Iterable[str]) -> dict[str, Conversation]:
        """The stored conversations among ``ids``, by id (a deleted one is left out).

        One query per 500 ids, without the counts a conversation summary carries: a
        review's merge needs only the conversations themselves.
        """
        from proctor.store._rows import conversation_from_row

        wanted = sorted(set(ids))
        found: dict[str, Conversation] = {}
        with self._read() as conn:
            for part in _chunks(wanted):
                for r in conn.execute(
                    select(t.conversations).where(t.conversations.c.conversation_id.in_(part))
                ):
                    found[r.conversation_id] = conversation_from_row(r._mapping)
        return found

    def source_contents(self, keys: Sequence[tuple[str, str]]) -> SourceContents:
        """Current content of the given sources, read in one snapshot."""
        with self._read() as conn:
            return _source_contents(conn, keys)


def _manifest_page(conn: Connection, run_id: str, batch_no: int) -> list[ManifestEntry]:
    """One batch's manifest entries in order: a range of (run_id, batch_no, position)."""
    return [_entry(r) for r in conn.execute(_MANIFEST_PAGE, {"run": run_id, "batch": batch_no})]


def _source_contents(
    conn: Connection, keys: Sequence[tuple[str, str]], page: dict[str, Any] | None = None
) -> SourceContents:
    """Current content of the given sources, on ``conn``'s snapshot.

    The statements are built once (``_CONTENT``) with expanding parameters: a review
    reads a batch this way hundreds of times. When ``keys`` are one batch's manifest
    page (``page``: its ``run`` and ``batch``), the sources themselves are read through
    the page instead (``_PAGE_CONTENT``): no list of ids is bound, rendered and looked up
    one by one for each of the hundreds of batches.
    """
    from proctor.store._rows import (
        conversation_from_row,
        message_from_row,
        subagent_from_row,
        task_event_from_row,
        tool_call_from_row,
    )

    by_type: dict[str, list[str]] = {}
    for source_type, source_id in keys:
        by_type.setdefault(source_type, []).append(source_id)
    q = _CONTENT

    def rows(statement: Any, ids: Sequence[str], **more: Any) -> Iterator[Any]:
        for part in _chunks(ids):
            yield from conn.execute(statement, {"ids": part, **more})

    def paged_rows(statement: Any) -> Iterable[Any]:
        return conn.execute(statement, page) if keys else ()

    def of_type(source_type: str, by_ids: Any, by_page: Any) -> Iterable[Any]:
        if source_type not in by_type:
            return ()
        if page is not None:
            return conn.execute(by_page, page)
        return rows(by_ids, by_type[source_type])

    paged = _PAGE_CONTENT
    messages = {
        r.source_id: message_from_row(r._mapping)
        for r in of_type("message", q.messages, paged.messages)
    }
    tool_calls = {
        r.source_id: tool_call_from_row(r._mapping)
        for r in of_type("tool_call", q.tool_calls, paged.tool_calls)
    }
    task_events = {
        r.source_id: task_event_from_row(r._mapping)
        for r in of_type("task_event", q.task_events, paged.task_events)
    }
    fingerprints: dict[tuple[str, str], str] = {}
    conversation_of: dict[str, str] = {}
    if page is not None and keys:
        for r in conn.execute(paged.sources, page):
            fingerprints[(r.source_type, r.source_id)] = r.fingerprint
            conversation_of[r.source_id] = r.conversation_id
    for source_type, ids_all in by_type.items() if page is None else ():
        for r in rows(q.sources, ids_all, kind=source_type):
            fingerprints[(source_type, r.source_id)] = r.fingerprint
            conversation_of[r.source_id] = r.conversation_id
    conversations: dict[str, Conversation] = {}
    project_of: dict[str, str] = {}
    in_order = sorted(set(conversation_of.values()))
    for r in rows(q.conversations, in_order) if page is None else paged_rows(paged.conversations):
        conversations[r.conversation_id] = conversation_from_row(r._mapping)
        project_of[r.conversation_id] = r.project_id
    project_names = {
        r.project_id: r.name
        for r in (
            rows(q.projects, sorted(set(project_of.values())))
            if page is None
            else paged_rows(paged.projects)
        )
    }
    subagent_runs = {
        r.parent_tool_call_id: subagent_from_row(r._mapping)
        for r in of_type("tool_call", q.subagent_runs, paged.subagent_runs)
    }
    return SourceContents(
        messages=messages,
        tool_calls=tool_calls,
        task_events=task_events,
        fingerprints=fingerprints,
        conversations=conversations,
        project_of=project_of,
        project_names=project_names,
        subagent_runs=subagent_runs,
    )


_RUN_STATUS = select(t.review_runs.c.status).where(t.review_runs.c.run_id == bindparam("run"))
_MANIFEST_PAGE = (
    select(t.review_manifest)
    .where(
        t.review_manifest.c.run_id == bindparam("run"),
        t.review_manifest.c.batch_no == bindparam("batch"),
    )
    .order_by(t.review_manifest.c.position)
)


class _ContentStatements(NamedTuple):
    """The reads of ``source_contents``, each over a list of ids (``ids``)."""

    messages: Any
    tool_calls: Any
    task_events: Any
    sources: Any
    conversations: Any
    projects: Any
    subagent_runs: Any


def _by_ids(table: Any, column: Any, *columns: Any) -> Any:
    return select(*(columns or (table,))).where(column.in_(bindparam("ids", expanding=True)))


_CONTENT = _ContentStatements(
    messages=_by_ids(t.messages, t.messages.c.source_id),
    tool_calls=_by_ids(t.tool_calls, t.tool_calls.c.source_id),
    task_events=_by_ids(t.task_events, t.task_events.c.source_id),
    sources=_by_ids(
        t.sources,
        t.sources.c.source_id,
        t.sources.c.source_id,
        t.sources.c.fingerprint,
        t.sources.c.conversation_id,
    ).where(t.sources.c.source_type == bindparam("kind")),
    conversations=_by_ids(t.conversations, t.conversations.c.conversation_id),
    projects=_by_ids(
        t.projects, t.projects.c.project_id, t.projects.c.project_id, t.projects.c.name
    ),
    subagent_runs=_by_ids(t.subagent_runs, t.subagent_runs.c.parent_tool_call_id),
)


class _PageStatements(NamedTuple):
    """The reads of one batch's sources through its manifest page (``run``, ``batch``)."""

    messages: Any
    tool_calls: Any
    task_events: Any
    sources: Any
    subagent_runs: Any
    conversations: Any
    projects: Any


def _through_page(table: Any, source_type: str | None, *columns: Any) -> Any:
    m = t.review_manifest.c
    on = m.source_id == table.c.source_id
    on = on & (m.source_type == (table.c.source_type if source_type is None else source_type))
    return (
        select(*(columns or (table,)))
        .select_from(t.review_manifest.join(table, on))
        .where(m.run_id == bindparam("run"), m.batch_no == bindparam("batch"))
    )


_PAGE_CONVERSATIONS = _through_page(t.sources, None, t.sources.c.conversation_id)
"""The conversations of a batch's sources that still exist."""

_PAGE_CONTENT = _PageStatements(
    messages=_through_page(t.messages, "message"),
    tool_calls=_through_page(t.tool_calls, "tool_call"),
    task_events=_through_page(t.task_events, "task_event"),
    sources=_through_page(
        t.sources,
        None,
        t.sources.c.source_type,
        t.sources.c.source_id,
        t.sources.c.fingerprint,
        t.sources.c.conversation_id,
    ),
    # In the order of the list the ids were read by before: by the calls' ids.
    subagent_runs=select(t.subagent_runs)
    .select_from(
        t.review_manifest.join(
            t.subagent_runs,
            (t.review_manifest.c.source_id == t.subagent_runs.c.parent_tool_call_id)
            & (t.review_manifest.c.source_type == "tool_call"),
        )
    )
    .where(
        t.review_manifest.c.run_id == bindparam("run"),
        t.review_manifest.c.batch_no == bindparam("batch"),
    )
    .order_by(t.subagent_runs.c.parent_tool_call_id),
    conversations=select(t.conversations)
    .where(t.conversations.c.conversation_id.in_(_PAGE_CONVERSATIONS))
    .order_by(t.conversations.c.conversation_id),
    projects=select(t.projects.c.project_id, t.projects.c.name)
    .where(
        t.projects.c.project_id.in_(
            select(t.conversations.c.project_id).where(
                t.conversations.c.conversation_id.in_(_PAGE_CONVERSATIONS)
            )
        )
    )
    .order_by(t.projects.c.project_id),
)


def _chunks(ids: Sequence[str], size: int = 500) -> Iterator[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def _resolve_run_id(conn: Connection, ref: str) -> str:
    ref = ref.strip()
    if not ref:
        raise NotFoundError("no review run id given")
    rows = conn.execute(
        select(t.review_runs.c.run_id)
        .where(t.review_runs.c.run_id.startswith(ref, autoescape=True))
        .limit(2)
    ).all()
    if not rows:
        raise NotFoundError(f"no review run {ref!r}; see `proctor review list`")
    if len(rows) > 1:
        raise NotFoundError(f"review run id {ref!r} is ambiguous; give more characters")
    return str(rows[0][0])


def _content_rows() -> Any:
    """(source_type, source_id, seq, size) of every source: manifest order and batch size."""
    calls = t.tool_calls.c
    call_size = func.coalesce(func.length(calls.result_text), 0) + func.coalesce(
        func.length(cast(calls.arguments, Text)), 0
    )
    return (
        select(
            literal("message").label("source_type"),
            t.messages.c.source_id.label("source_id"),
            t.messages.c.seq.label("seq"),
            func.length(t.messages.c.text).label("size"),
        )
        .union_all(
            select(literal("tool_call"), calls.source_id, calls.seq, call_size),
            select(
                literal("task_event"),
                t.task_events.c.source_id,
                t.task_events.c.seq,
                func.length(t.task_events.c.text),
            ),
        )
        .subquery("content")
    )


def _build_manifest(
    conn: Connection,
    run_id: str,
    scope: ReviewScope,
    stages: Sequence[str],
    reanalyze: bool,
    batch_size: int,
    batch_chars: int,
) -> int:
    """Insert the run's manifest with one INSERT … SELECT; return its size.

    This executes ``proctor.graph``'s manifest policy in the database: the sources its
    ``ManifestRule`` admits, in ``manifest_order``, each in the batch ``batch_number``
    gives (the larger of the two running counts: a batch closes after ``batch_size``
    sources or about ``batch_chars`` characters). tests/review/test_manifest_policy.py
    checks this statement's manifest against ``plan_manifest``.
    """
    s = t.sources
    conv = t.conversations
    content = _content_rows()
    rule = manifest_rule(
        scope.project_id, scope.time_from, scope.time_to, stages, reanalyze=reanalyze
    )
    when = func.coalesce(s.c.occurred_at, conv.c.started_at, type_=t.UTCDateTime())
    conditions: list[ColumnElement[bool]] = []
    if rule.project_id is not None:
        conditions.append(conv.c.project_id == rule.project_id)
    if rule.time_from is not None:
        conditions.append(when >= rule.time_from)
    if rule.time_to is not None:
        conditions.append(when < rule.time_to)
    if rule.pending_stages:
        pending = [
            not_(
                exists().where(
                    t.review_checkpoints.c.stage == stage,
                    t.review_checkpoints.c.scope_key == scope.key,
                    t.review_checkpoints.c.source_type == s.c.source_type,
                    t.review_checkpoints.c.source_id == s.c.source_id,
                    t.review_checkpoints.c.fingerprint == s.c.fingerprint,
                )
            )
            for stage in rule.pending_stages
        ]
        conditions.append(or_(*pending))
    order = (
        conv.c.started_at.nulls_last(),
        conv.c.conversation_id,
        func.coalesce(content.c.seq, 0),
        s.c.source_type,
        s.c.source_id,
    )
    position = func.row_number().over(order_by=order) - 1
    chars = func.sum(func.coalesce(content.c.size, 0) + 1).over(order_by=order, rows=(None, 0))
    ranked = (
        select(
            literal(run_id).label("run_id"),
            position.label("position"),
            s.c.source_type,
            s.c.source_id,
            s.c.conversation_id,
            s.c.fingerprint,
            when.label("occurred_at"),
            chars.label("chars"),
        )
        .select_from(
            s.join(conv, conv.c.conversation_id == s.c.conversation_id).outerjoin(
                content,
                and_(
                    content.c.source_type == s.c.source_type,
                    content.c.source_id == s.c.source_id,
                ),
            )
        )
        .where(*conditions)
        .subquery("ranked")
    )
    rows = select(
        ranked.c.run_id,
        ranked.c.position,
        ranked.c.source_type,
        ranked.c.source_id,
        ranked.c.conversation_id,
        ranked.c.fingerprint,
        ranked.c.occurred_at,
        case(
            (
                ranked.c.position // batch_size >= (ranked.c.chars - 1) // batch_chars,
                ranked.c.position // batch_size,
            ),
            else_=(ranked.c.chars - 1) // batch_chars,
        ).label("batch_no"),
        literal("pending").label("state"),
    )
    conn.execute(
        insert(t.review_manifest).from_select(
            [
                "run_id",
                "position",
                "source_type",
                "source_id",
                "conversation_id",
                "fingerprint",
                "occurred_at",
                "batch_no",
                "state",
            ],
            rows,
        )
    )
    return int(
        conn.execute(select(func.count()).where(t.review_manifest.c.run_id == run_id)).scalar_one()
    )
