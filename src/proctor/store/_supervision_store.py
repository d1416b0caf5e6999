"""Supervision sessions and runs (SPEC SUP-1, SUP-2, SUP-9).

A session binds one target (a conversation or a task) to a mode, a trigger policy, a
throttle and a budget. A run is one analysis of a target. Starting a run is a claim made
in one transaction: the session row is locked, runs abandoned by a stopped process are
closed, and a policy given by the caller sees the session, the run in flight and the
usage of the period before the run row is inserted. Two processes (``proctor watch`` and
``proctor supervise run``) therefore never analyse one target at the same time, and a
refused claim marks the session pending so the events behind it are not lost.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from proctor.errors import NotFoundError
from proctor.store import _schema as t
from proctor.store._base import Repository

SupervisionMode = Literal["general", "challenge", "evidence", "goal", "risk"]
"""What the supervisor looks for (SPEC SUP-1); the supervisor's ``Mode``."""

SupervisionTrigger = Literal["manual", "after_reply", "every_n_steps", "key_event", "run_end"]
"""When an analysis runs (SPEC SUP-2); ``manual`` means only ``proctor supervise run``."""

RunTrigger = SupervisionTrigger | Literal["pending"]
"""What a run was requested for: a trigger that fired, or ``pending`` (events a refused or
in-flight request left for later)."""

SessionState = Literal["active", "paused: budget", "disabled"]
"""What a session shows: analysing, paused until its budget period turns, or off."""

TargetType = Literal["conversation", "task"]
"""What a session supervises: a whole conversation, or one task in it."""

SupervisionRunStatus = Literal["running", "ok", "unavailable", "failed"]
"""An analysis in flight, or how it ended (``unavailable``: no usable model)."""

Refusal = Literal["running", "throttled", "budget", "disabled"]
"""Why a claim was refused: a run in flight, too soon, the budget spent, supervision off."""


@dataclass(frozen=True, slots=True)
class SupervisionSession:
    """A target under live supervision and how it is supervised."""

    session_id: str
    target_type: TargetType
    target_id: str
    mode: SupervisionMode
    triggers: tuple[SupervisionTrigger, ...]
    every_n_steps: int | None
    throttle_seconds: float
    budget_calls: int | None
    """Model calls allowed per period; None: no limit."""
    budget_tokens: int | None
    """Input plus output tokens allowed per period; None: no limit."""
    budget_period_seconds: float
    enabled: bool
    state: SessionState
    last_run_at: datetime | None
    last_event_index: int
    """Index of the last trace event an analysis covered (-1: none)."""
    pending: bool
    """Events arrived that no analysis has covered yet (throttled, in flight or paused)."""
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class SupervisionRun:
    """One analysis of a target: running, or how it ended."""

    run_id: str
    session_id: str | None
    target_id: str
    trigger: RunTrigger
    mode: SupervisionMode
    status: SupervisionRunStatus
    started_at: datetime
    prompt_version: int = 0
    connection: str | None = None
    model: str | None = None
    error: str | None = None
    findings: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    window_chars: int = 0
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SupervisionUsage:
    """Model calls and tokens spent by a session's runs since some time."""

    calls: int = 0
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended: what ``finish_supervision_run`` writes."""

    status: SupervisionRunStatus
    prompt_version: int
    connection: str | None
    model: str | None
    error: str | None
    findings: int
    input_tokens: int
    output_tokens: int
    window_chars: int
    last_event_index: int | None
    """Trace events the analysis covered; None when it saw no window (it failed first)."""


@dataclass(frozen=True, slots=True)
class ClaimVerdict:
    """Whether a run may start now and what the session should show."""

    refused: Refusal | None = None
    """Why not; None: it may start."""
    mark_pending: bool = False
    """On refusal: keep the events for a later analysis."""
    state: SessionState | None = None
    """New session state, or None to leave it."""


class ClaimView(Protocol):
    """What a claim policy sees inside the claiming transaction."""

    @property
    def session(self) -> SupervisionSession | None:
        """The target's session (None: a manual run of an unsupervised target)."""
        ...

    @property
    def running(self) -> SupervisionRun | None:
        """The target's run in flight, if any."""
        ...

    def usage_since(self, since: datetime) -> SupervisionUsage:
        """What the session's runs started since ``since`` spent."""
        ...


ClaimPolicy = Callable[[ClaimView], ClaimVerdict]
"""Decides, inside the transaction, whether a run may start."""


@dataclass(frozen=True, slots=True)
class RunClaim:
    """A run that wants to start."""

    target_id: str
    trigger: RunTrigger
    mode: SupervisionMode
    now: datetime
    stale_before: datetime
    """Runs still marked running that started before this were abandoned by a stopped process."""


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """The run that started, or why none did."""

    run: SupervisionRun | None
    verdict: ClaimVerdict
    session: SupervisionSession | None
    """The session as it is after the claim."""


ABANDONED = "abandoned: the process running this analysis stopped before it ended"


class SupervisionRecords(Protocol):
    """What live supervision needs from the store (add to ``Store``)."""

    def put_supervision_session(self, session: SupervisionSession) -> SupervisionSession:
        """Insert or replace the session of ``session.target_id``."""
        ...

    def supervision_session(self, target_id: str) -> SupervisionSession | None:
        """The session of one target, or None."""
        ...

    def supervision_sessions(
        self, *, conversation_ids: Sequence[str] | None = None, enabled_only: bool = False
    ) -> list[SupervisionSession]:
        """Sessions, optionally only those whose target lies in some conversations."""
        ...

    def claim_supervision_run(self, claim: RunClaim, policy: ClaimPolicy) -> ClaimResult:
        """Start a run if ``policy`` allows it, in one transaction."""
        ...

    def finish_supervision_run(self, run_id: str, end: RunEnd, *, now: datetime) -> SupervisionRun:
        """Record how a run ended and what its session has now covered."""
        ...

    def clear_supervision_pending(self, session_id: str, *, now: datetime) -> None:
        """Forget pending events that an earlier analysis turned out to cover."""
        ...

    def supervision_runs(
        self, *, target_id: str | None = None, limit: int = 20
    ) -> list[SupervisionRun]:
        """Runs, newest first."""
        ...

    def supervision_usage(self, session_id: str, *, since: datetime) -> SupervisionUsage:
        """What a session's runs started since ``since`` spent."""
        ...

    def task_conversation_id(self, task_ref: str) -> tuple[str, str]:
        """``(task_id, conversation_id)`` for a task id or unique prefix."""
        ...


_SESSIONS = t.supervision_sessions
_RUNS = t.supervision_runs


def _session_of(
    connection: Connection, target_id: str, *, lock: bool = False
) -> SupervisionSession | None:
    query = select(_SESSIONS).where(_SESSIONS.c.target_id == target_id)
    row = connection.execute(query.with_for_update() if lock else query).mappings().first()
    if row is None:
        return None
    values = dict(row)
    values["triggers"] = tuple(values["triggers"])
    return SupervisionSession(**values)


def _run_of(connection: Connection, *conditions: ColumnElement[bool]) -> SupervisionRun | None:
    row = connection.execute(select(_RUNS).where(*conditions)).mappings().first()
    return None if row is None else SupervisionRun(**dict(row))


def _values(record: SupervisionSession | SupervisionRun) -> dict[str, Any]:
    values = {name: getattr(record, name) for name in record.__slots__}
    if isinstance(record, SupervisionSession):
        values["triggers"] = list(record.triggers)
    return values


def _update_session(connection: Connection, session_id: str, /, **values: Any) -> None:
    connection.execute(
        update(_SESSIONS).where(_SESSIONS.c.session_id == session_id).values(**values)
    )


def _usage_since(connection: Connection, session_id: str, since: datetime) -> SupervisionUsage:
    calls = t.model_calls.c
    run_ids = select(_RUNS.c.run_id).where(
        _RUNS.c.session_id == session_id, _RUNS.c.started_at >= since
    )
    count, tokens = connection.execute(
        select(
            func.count(),
            func.coalesce(func.sum(calls.input_tokens), 0)
            + func.coalesce(func.sum(calls.output_tokens), 0),
        ).where(calls.run_id.in_(run_ids))
    ).one()
    return SupervisionUsage(int(count), int(tokens))


@dataclass(slots=True)
class _View:
    connection: Connection
    session: SupervisionSession | None
    running: SupervisionRun | None

    def usage_since(self, since: datetime) -> SupervisionUsage:
        if self.session is None:
            return SupervisionUsage()
        return _usage_since(self.connection, self.session.session_id, since)


class SupervisionReads(Repository):
    """Supervision sessions and runs: the reads."""

    def supervision_session(self, target_id: str) -> SupervisionSession | None:
        """The session of one target, or None."""
        with self._read() as c:
            return _session_of(c, target_id)

    def supervision_sessions(
        self, *, conversation_ids: Sequence[str] | None = None, enabled_only: bool = False
    ) -> list[SupervisionSession]:
        """Sessions by target id; with ``conversation_ids``, only targets inside those
        conversations (the conversations themselves and their tasks)."""
        columns = _SESSIONS.c
        query = select(columns.target_id).order_by(columns.target_id)
        if enabled_only:
            query = query.where(columns.enabled.is_(True))
        if conversation_ids is not None:
            ids = list(conversation_ids)
            tasks = select(t.tasks.c.task_id).where(t.tasks.c.conversation_id.in_(ids))
            query = query.where(
                ((columns.target_type == "conversation") & columns.target_id.in_(ids))
                | ((columns.target_type == "task") & columns.target_id.in_(tasks))
            )
        with self._read() as c:
            found = [_session_of(c, target_id) for target_id in c.execute(query).scalars()]
        return [session for session in found if session is not None]

    def supervision_runs(
        self, *, target_id: str | None = None, limit: int = 20
    ) -> list[SupervisionRun]:
        """Runs, newest first (all targets unless ``target_id``)."""
        query = select(_RUNS).order_by(_RUNS.c.started_at.desc(), _RUNS.c.run_id).limit(limit)
        if target_id is not None:
            query = query.where(_RUNS.c.target_id == target_id)
        with self._read() as c:
            return [SupervisionRun(**dict(row)) for row in c.execute(query).mappings()]

    def supervision_usage(self, session_id: str, *, since: datetime) -> SupervisionUsage:
        """Model calls (attempts) and tokens of the session's runs started since ``since``."""
        with self._read() as c:
            return _usage_since(c, session_id, since)

    def task_conversation_id(self, task_ref: str) -> tuple[str, str]:
        """``(task_id, conversation_id)`` for a task id or a unique prefix of one."""
        tasks = t.tasks.c
        pair = select(tasks.task_id, tasks.conversation_id)
        with self._read() as c:
            exact = c.execute(pair.where(tasks.task_id == task_ref)).first()
            candidates = (
                []
                if exact
                else c.execute(
                    pair.where(tasks.task_id.startswith(task_ref, autoescape=True))
                    .order_by(tasks.task_id)
                    .limit(6)
                ).all()
            )
        if exact is not None or len(candidates) == 1:
            task_id, conversation_id = exact or candidates[0]
            return str(task_id), str(conversation_id)
        if not candidates:
            raise NotFoundError(
                f"no task matches {task_ref!r}; `proctor conversations show` lists a conversation's tasks"
            )
        shown = ", ".join(str(row[0]) for row in candidates[:5])
        raise NotFoundError(f"{task_ref!r} matches several tasks ({shown}); give more of the id")


class SupervisionRepository(SupervisionReads):
    """``SupervisionReads`` and the writes (sessions, claims and run ends), each one transaction."""

    def put_supervision_session(self, session: SupervisionSession) -> SupervisionSession:
        """Insert or replace the session of ``session.target_id`` (its id and creation are kept)."""
        with self._write() as c:
            existing = _session_of(c, session.target_id, lock=True)
            if existing is None:
                c.execute(insert(_SESSIONS).values(**_values(session)))
            else:
                kept = {"session_id": existing.session_id, "created_at": existing.created_at}
                _update_session(c, existing.session_id, **{**_values(session), **kept})
            stored = _session_of(c, session.target_id)
        assert stored is not None
        return stored

    def claim_supervision_run(self, claim: RunClaim, policy: ClaimPolicy) -> ClaimResult:
        """Start a run of ``claim.target_id`` if ``policy`` allows it, in one transaction.

        Runs of the target still marked running that started before ``claim.stale_before``
        are closed as failed first. On refusal the session is marked pending when the
        policy says so; on success the session's throttle clock starts now and its pending
        events are handed to the new run.
        """
        with self._write() as c:
            session = _session_of(c, claim.target_id, lock=True)
            c.execute(
                update(_RUNS)
                .where(
                    _RUNS.c.target_id == claim.target_id,
                    _RUNS.c.status == "running",
                    _RUNS.c.started_at < claim.stale_before,
                )
                .values(status="failed", error=ABANDONED, finished_at=claim.now)
            )
            running = _run_of(c, _RUNS.c.target_id == claim.target_id, _RUNS.c.status == "running")
            verdict = policy(_View(c, session, running))
            changes: dict[str, Any] = {"updated_at": claim.now}
            if verdict.state is not None:
                changes["state"] = verdict.state
            run: SupervisionRun | None = None
            if verdict.refused is None:
                run = SupervisionRun(
                    run_id=uuid.uuid4().hex,
                    session_id=None if session is None else session.session_id,
                    target_id=claim.target_id,
                    trigger=claim.trigger,
                    mode=claim.mode,
                    status="running",
                    started_at=claim.now,
                )
                c.execute(insert(_RUNS).values(**_values(run)))
                changes.update(last_run_at=claim.now, pending=False)
            elif verdict.mark_pending:
                changes["pending"] = True
            if session is not None:
                _update_session(c, session.session_id, **changes)
            return ClaimResult(run, verdict, _session_of(c, claim.target_id))

    def finish_supervision_run(self, run_id: str, end: RunEnd, *, now: datetime) -> SupervisionRun:
        """Record how a run ended and, in the same transaction, what its session now covers."""
        with self._write() as c:
            run = _run_of(c, _RUNS.c.run_id == run_id)
            if run is None:
                raise NotFoundError(f"no supervision run {run_id!r}")
            covered = {"last_event_index": end.last_event_index}
            ended = {k: v for k, v in asdict(end).items() if k not in covered}
            c.execute(
                update(_RUNS).where(_RUNS.c.run_id == run_id).values(**ended, finished_at=now)
            )
            if run.session_id is not None and end.last_event_index is not None:
                c.execute(
                    update(_SESSIONS)
                    .where(
                        _SESSIONS.c.session_id == run.session_id,
                        _SESSIONS.c.last_event_index < end.last_event_index,
                    )
                    .values(last_event_index=end.last_event_index, updated_at=now)
                )
            finished = _run_of(c, _RUNS.c.run_id == run_id)
        assert finished is not None
        return finished

    def clear_supervision_pending(self, session_id: str, *, now: datetime) -> None:
        """Forget pending events that an earlier analysis turned out to cover."""
        with self._write() as c:
            _update_session(c, session_id, pending=False, updated_at=now)
