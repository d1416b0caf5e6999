"""Keeping the full-text index in step with the store (incremental, one transaction per chunk).

``index_full_text`` builds a document for every message and tool call and rebuilds only
those whose inputs changed: a document's ``basis`` hashes the stored content hash of its
source, of the turns around it (they are part of its full-text body), its project and
conversation title. A pass first compares a signature of the sources (counts and latest
update times) with the one its last pass recorded: when they are equal nothing else is
read and nothing is written. Documents of a deleted conversation go with it (foreign key
cascade; on SQLite, triggers keep the FTS5 index in step). Graph objects come from the
review pipeline through ``index_graph_objects`` (``_graph.py``).

Full text costs little and is brought up to date before a search; sentence embeddings
cost a lot (``_embed.py``) and are added afterwards, in the background, to the documents
that lack them. ``index_sources`` does both, to the end.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, delete, func, insert, select, true
from sqlalchemy.engine import Connection

from proctor._util.clock import utcnow
from proctor.search._documents import (
    SOURCE_TYPES,
    SourceRef,
    digest,
    doc_key,
    embedding_text,
    message_body,
    message_context,
    object_body,
)
from proctor.search._embed import embed_pending
from proctor.search._encoder import missing_embeddings
from proctor.search._graph import missing_graph_documents, repair_graph_documents
from proctor.search._postings import refresh_postings
from proctor.search._unchanged import unless_changed
from proctor.search._write import (
    CHUNK,
    IN_CLAUSE,
    Encoder,
    Row,
    chunks,
    delete_rows,
    lock_index,
    resolve_encoder,
    upsert_rows,
)
from proctor.store import SqlStore
from proctor.store import tables as t

IndexProgress = Callable[[int, int], None]
"""Called with (documents done, documents to do) while indexing."""


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one indexing pass did."""

    documents: int
    """Source documents in the index afterwards."""
    added: int
    updated: int
    removed: int
    embedded: int
    """Documents whose text went through the encoder."""
    seconds: float
    embeddings: str | None
    """Why documents were not embedded (what to install), or None: they were, or the pass
    was for full text only (``index_full_text``)."""
    complete: bool = True
    """False when a time limit ended the full-text pass early (the next pass goes on)."""


# -- sources ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Planned:
    key: str
    doc_type: str
    source_id: str
    conversation_id: str
    basis: str
    prev_id: str | None = None
    next_id: str | None = None


def _plan(connection: Connection, scope: Sequence[str] | None = None) -> list[_Planned]:
    """Every source document the index should hold (of these conversations, when a scope
    is given), with its basis (no text read)."""
    planned: list[_Planned] = []
    for part in [None] if scope is None else chunks(sorted(scope), IN_CLAUSE):
        planned += _plan_part(connection, part)
    return planned


def _plan_part(connection: Connection, scope: Sequence[str] | None) -> list[_Planned]:
    c, m, s = t.conversations, t.messages, t.sources
    headers = select(c.c.conversation_id, c.c.project_id, c.c.title)
    if scope is not None:
        headers = headers.where(c.c.conversation_id.in_(list(scope)))
    conversations = {
        row.conversation_id: (row.project_id, row.title) for row in connection.execute(headers)
    }
    planned: list[_Planned] = []
    statement = (
        select(m.c.source_id, m.c.conversation_id, s.c.content_hash)
        .join(s, and_(s.c.source_type == "message", s.c.source_id == m.c.source_id))
        .order_by(m.c.conversation_id, m.c.seq)
    )
    if scope is not None:
        statement = statement.where(m.c.conversation_id.in_(list(scope)))
    messages = connection.execute(statement).all()
    for index, row in enumerate(messages):
        before = messages[index - 1] if index > 0 else None
        after = messages[index + 1] if index + 1 < len(messages) else None
        if before is not None and before.conversation_id != row.conversation_id:
            before = None
        if after is not None and after.conversation_id != row.conversation_id:
            after = None
        header = conversations.get(row.conversation_id, (None, None))
        planned.append(
            _Planned(
                key=doc_key("message", row.source_id),
                doc_type="message",
                source_id=row.source_id,
                conversation_id=row.conversation_id,
                basis=digest(
                    row.content_hash,
                    before.content_hash if before else None,
                    after.content_hash if after else None,
                    *header,
                ),
                prev_id=before.source_id if before else None,
                next_id=after.source_id if after else None,
            )
        )
    calls = select(t.tool_calls.c.source_id, t.tool_calls.c.conversation_id, s.c.content_hash).join(
        s, and_(s.c.source_type == "tool_call", s.c.source_id == t.tool_calls.c.source_id)
    )
    if scope is not None:
        calls = calls.where(t.tool_calls.c.conversation_id.in_(list(scope)))
    for row in connection.execute(calls):
        header = conversations.get(row.conversation_id, (None, None))
        planned.append(
            _Planned(
                key=doc_key("tool_call", row.source_id),
                doc_type="tool_call",
                source_id=row.source_id,
                conversation_id=row.conversation_id,
                basis=digest(row.content_hash, *header),
            )
        )
    return planned


def _indexed(
    connection: Connection, doc_types: Sequence[str], scope: Sequence[str] | None = None
) -> dict[str, tuple[str, int]]:
    """``doc_key → (basis, row_id)`` of the documents of these types in the index (of these
    conversations, when a scope is given)."""
    d = t.search_documents
    statement = select(d.c.doc_key, d.c.basis, d.c.row_id).where(d.c.doc_type.in_(list(doc_types)))
    if scope is None:
        return {row.doc_key: (row.basis, row.row_id) for row in connection.execute(statement)}
    found: dict[str, tuple[str, int]] = {}
    for part in chunks(sorted(scope), IN_CLAUSE):
        for row in connection.execute(statement.where(d.c.conversation_id.in_(list(part)))):
            found[row.doc_key] = (row.basis, row.row_id)
    return found


def _message_rows(connection: Connection, chunk: Sequence[_Planned]) -> list[Row]:
    wanted = {p.source_id for p in chunk}
    wanted |= {p.prev_id for p in chunk if p.prev_id} | {p.next_id for p in chunk if p.next_id}
    m = t.messages
    found: dict[str, Any] = {}
    for ids in chunks(sorted(wanted), IN_CLAUSE):
        for row in connection.execute(
            select(m.c.source_id, m.c.seq, m.c.role, m.c.author, m.c.text, m.c.created_at).where(
                m.c.source_id.in_(list(ids))
            )
        ):
            found[row.source_id] = row
    headers = _headers(connection, {p.conversation_id for p in chunk})
    rows = []
    for planned in chunk:
        stored = found.get(planned.source_id)
        if stored is None:  # removed since the plan was read; the next pass drops it
            continue
        speaker = stored.author or stored.role
        neighbours = [
            (found[i].author or found[i].role, found[i].text)
            for i in (planned.prev_id, planned.next_id)
            if i is not None and i in found
        ]
        project_id, title = headers.get(planned.conversation_id, (None, None))
        rows.append(
            Row(
                values=_values(
                    planned,
                    project_id=project_id,
                    position=stored.seq,
                    author=stored.author,
                    title=title,
                    text=stored.text,
                    body=message_body(speaker, stored.text, stored.created_at),
                    context=message_context(neighbours),
                    occurred_at=stored.created_at,
                ),
                embed_text=embedding_text(speaker, stored.text),
            )
        )
    return rows


def _tool_rows(connection: Connection, chunk: Sequence[_Planned]) -> list[Row]:
    c = t.tool_calls
    found: dict[str, Any] = {}
    for ids in chunks([p.source_id for p in chunk], IN_CLAUSE):
        for row in connection.execute(
            select(c.c.source_id, c.c.name, c.c.arguments, c.c.result_text, c.c.created_at).where(
                c.c.source_id.in_(list(ids))
            )
        ):
            found[row.source_id] = row
    headers = _headers(connection, {p.conversation_id for p in chunk})
    rows = []
    for planned in chunk:
        call = found.get(planned.source_id)
        if call is None:
            continue
        text = _tool_text(call.arguments, call.result_text)
        project_id, _title = headers.get(planned.conversation_id, (None, None))
        rows.append(
            Row(
                values=_values(
                    planned,
                    project_id=project_id,
                    position=None,
                    author=None,
                    title=call.name,
                    text=text,
                    body=object_body(call.name, text, call.created_at),
                    context="",
                    occurred_at=call.created_at,
                ),
                embed_text=embedding_text(call.name, text),
            )
        )
    return rows


def _tool_text(arguments: Any, result: str | None) -> str:
    if isinstance(arguments, dict):
        shown = " ".join(f"{k}={v}" for k, v in arguments.items())
    else:
        shown = "" if arguments is None else str(arguments)
    return "\n".join(part for part in (shown, result or "") if part)


def _headers(
    connection: Connection, ids: Iterable[str]
) -> dict[str, tuple[str | None, str | None]]:
    found = {}
    for chunk in chunks(sorted(ids), IN_CLAUSE):
        for row in connection.execute(
            select(
                t.conversations.c.conversation_id,
                t.conversations.c.project_id,
                t.conversations.c.title,
            ).where(t.conversations.c.conversation_id.in_(list(chunk)))
        ):
            found[row.conversation_id] = (row.project_id, row.title)
    return found


def _values(planned: _Planned, **fields: Any) -> dict[str, Any]:
    return {
        "doc_key": planned.key,
        "doc_type": planned.doc_type,
        "doc_id": planned.source_id,
        "conversation_id": planned.conversation_id,
        "source_refs": [
            SourceRef(planned.doc_type, planned.source_id, planned.conversation_id).as_json()
        ],
        "basis": planned.basis,
        **fields,
    }


def index_full_text(
    store: SqlStore,
    *,
    progress: IndexProgress | None = None,
    seconds: float | None = None,
    full: bool = False,
) -> IndexReport:
    """Bring the full-text index up to date with the store's messages and tool calls.

    Cheap (thousands of documents a second): nothing is embedded. A rebuilt document
    keeps its vector when the text the encoder reads did not change; the others wait for
    :func:`embed_pending`. Every chunk is one short write transaction, so a pass that
    ``seconds`` cuts short (``complete`` False) leaves only finished chunks behind, and
    the next pass skips them.

    A pass after a recorded one looks only at the conversations whose sources or header
    changed since (with a minute's margin for writes that committed late), so a few new
    messages cost the same in a large store as in a small one; it checks the totals after,
    and looks at everything when they disagree (sources removed from a conversation that
    shows no change). ``full`` looks at everything at once.
    """
    started = time.perf_counter()
    # The store exposes transactions to its own parts; the index is one of them.
    with store.repos.search.read() as connection:
        # A server's every search asks for a pass first: the checks are counted again only
        # when the database changed (``_unchanged.py``).
        repair, seen = unless_changed(
            connection,
            "full-text pass check",
            lambda: (missing_graph_documents(connection), _signature_row(connection)),
        )
        signature, recorded = _signature_of(seen), seen.recorded
        same = recorded == signature
        scope = None if same or full else _changed_conversations(connection, recorded)
        planned = [] if same else _plan(connection, scope)
        indexed = {} if same else _indexed(connection, SOURCE_TYPES, scope)
    if repair is not None:
        repair_graph_documents(store, repair)
    if same:
        return IndexReport(
            documents=int(signature[0]),
            added=0,
            updated=0,
            removed=0,
            embedded=0,
            seconds=time.perf_counter() - started,
            embeddings=None,
        )
    wanted = {p.key for p in planned}
    stale = [p for p in planned if indexed.get(p.key, ("", 0))[0] != p.basis]
    removed = [indexed[key][1] for key in indexed if key not in wanted]
    done = 0
    written: list[_Planned] = []
    for kind, reader in (("message", _message_rows), ("tool_call", _tool_rows)):
        for chunk in chunks([p for p in stale if p.doc_type == kind], CHUNK):
            if seconds is not None and time.perf_counter() - started >= seconds:
                return _report(len(planned), indexed, written, [], started, complete=False)
            with store.repos.search.read() as connection:
                rows = reader(connection, chunk)
            with store.repos.search.write() as connection:
                upsert_rows(connection, rows)
            written += chunk
            done += len(chunk)
            if progress is not None:
                progress(done, len(stale))
    with store.repos.search.write() as connection:
        delete_rows(connection, removed)
        documents = _source_documents(connection)
        if scope is None:
            # Sources without a message or tool call row (none are expected) make no document.
            _record_signature(connection, signature, int(signature[0]) - len(planned))
            consistent = True
        else:
            consistent = documents + _offset(connection) == signature[0]
            if consistent:
                _record_signature(connection, signature, None)
    if not consistent:  # sources went that no changed conversation shows: look at all
        return index_full_text(store, progress=progress, seconds=seconds, full=True)
    return _report(documents, indexed, written, removed, started, complete=True)


def _report(
    documents: int,
    indexed: dict[str, tuple[str, int]],
    written: Sequence[_Planned],
    removed: Sequence[int],
    started: float,
    *,
    complete: bool,
) -> IndexReport:
    added = sum(1 for p in written if p.key not in indexed)
    return IndexReport(
        documents=documents,
        added=added,
        updated=len(written) - added,
        removed=len(removed),
        embedded=0,
        seconds=time.perf_counter() - started,
        embeddings=None,
        complete=complete,
    )


def index_sources(
    store: SqlStore,
    *,
    encoder: Encoder = "auto",
    progress: IndexProgress | None = None,
) -> IndexReport:
    """Bring the whole index up to date: full text, the common words' postings when due
    (``_postings.py``), then every missing vector.

    Embedding a large store takes minutes; long-running processes use
    :class:`~proctor.search.BackgroundIndexer` instead, and ``proctor ingest`` and
    ``proctor search`` hand it to a detached indexer (``hand_off_indexing``).

    Args:
        store: the store to read from and write the index into.
        encoder: the sentence encoder, None for full text only, ``"auto"`` for the model
            when the ``embeddings`` extra and the model package are installed.
        progress: called after each written chunk with (done, to do), first for the full
            text, then for the embeddings.
    """
    started = time.perf_counter()
    chosen = resolve_encoder(encoder)
    report = index_full_text(store, progress=progress)
    refresh_postings(store)
    embedded = 0
    if chosen is not None:
        embedded = embed_pending(store, chosen, progress=progress).embedded
    return dataclasses.replace(
        report,
        embedded=embedded,
        seconds=time.perf_counter() - started,
        embeddings=None if chosen is not None else (missing_embeddings() or "turned off"),
    )


def full_text_behind(connection: Connection) -> bool:
    """Whether messages or tool calls changed since the last full-text pass."""
    return freshness(connection).behind


@dataclass(frozen=True, slots=True)
class Freshness:
    """The index's freshness and size, as one statement reads them."""

    behind: bool
    """Whether messages or tool calls changed since the last full-text pass."""
    documents: int | None
    """Documents in the index, when counted."""


def freshness(connection: Connection, *, count_documents: bool = False) -> Freshness:
    """Whether the full text is behind the sources (and, when asked, how many documents the
    index holds), in one round trip: a search asks on every query. Counted again only
    when the database changed since this connection last asked (``_unchanged.py``)."""

    def counted() -> Freshness:
        row = _signature_row(connection, count_documents=count_documents)
        return Freshness(
            behind=bool(row.recorded != _signature_of(row)),
            documents=int(row.documents) if count_documents else None,
        )

    return unless_changed(connection, ("freshness", count_documents), counted)


_SIGNATURE = "sources_signature"
_OFFSET = "sources_without_document"
LATE_COMMIT = timedelta(minutes=1)
"""How far before the recorded latest update an incremental pass looks again: a write
stamped before the last pass may commit after it (another process, a long transaction)."""
INCREMENTAL_CONVERSATIONS = 500
"""Past this many changed conversations a pass plans them all (one read is cheaper)."""


def _signature_row(connection: Connection, *, count_documents: bool = False) -> Any:
    """What the sources look like (``_signature_of``) beside the signature the last pass
    recorded (``recorded``), and the index's documents (``documents``) when asked.

    Every write path of the store moves the signature: a new or revised source raises
    ``sources.updated_at``, a deleted conversation lowers the count, a renamed or moved
    conversation raises ``conversations.updated_at``.
    """
    state, d = t.search_state, t.search_documents
    recorded = select(state.c.value).where(state.c.name == _SIGNATURE).scalar_subquery()
    columns: list[Any] = [*_signature_columns(), recorded.label("recorded")]
    if count_documents:
        columns.append(select(func.count(d.c.doc_type)).scalar_subquery().label("documents"))
    return connection.execute(_from_signature(select(*columns))).one()


def _signature_counts() -> tuple[Any, Any]:
    s, c = t.sources, t.conversations
    sources = (
        select(func.count().label("count"), func.max(s.c.updated_at).label("latest"))
        .where(s.c.source_type.in_(SOURCE_TYPES))
        .subquery("sources_seen")
    )
    conversations = select(
        func.count().label("count"), func.max(c.c.updated_at).label("latest")
    ).subquery("conversations_seen")
    return sources, conversations


_SIGNATURE_FROM = _signature_counts()


def _signature_columns() -> list[Any]:
    sources, conversations = _SIGNATURE_FROM
    return [
        sources.c.count.label("sources"),
        sources.c.latest.label("sources_latest"),
        conversations.c.count.label("conversations"),
        conversations.c.latest.label("conversations_latest"),
    ]


def _from_signature(statement: Select[Any]) -> Select[Any]:
    """``statement`` over the two one-row aggregates (joined: neither is a cartesian
    product's accident)."""
    sources, conversations = _SIGNATURE_FROM
    return statement.select_from(sources.join(conversations, true()))


def _signature_of(row: Any) -> list[Any]:
    return [
        row.sources,
        row.sources_latest.isoformat() if row.sources_latest else None,
        row.conversations,
        row.conversations_latest.isoformat() if row.conversations_latest else None,
    ]


def _record_signature(connection: Connection, signature: list[Any], offset: int | None) -> None:
    """Record the sources' signature (and, after a full pass, how many sources make no
    document) in the pass's last transaction."""
    lock_index(connection)
    state = t.search_state
    values = {_SIGNATURE: signature} | ({} if offset is None else {_OFFSET: offset})
    connection.execute(delete(state).where(state.c.name.in_(list(values))))
    connection.execute(
        insert(state),
        [{"name": name, "value": value, "updated_at": utcnow()} for name, value in values.items()],
    )


def _offset(connection: Connection) -> int:
    state = t.search_state
    found = connection.execute(
        select(state.c.value).where(state.c.name == _OFFSET)
    ).scalar_one_or_none()
    return int(found or 0)


def _source_documents(connection: Connection) -> int:
    d = t.search_documents
    return int(
        connection.execute(
            select(func.count(d.c.doc_type)).where(d.c.doc_type.in_(list(SOURCE_TYPES)))
        ).scalar_one()
    )


def _changed_conversations(connection: Connection, recorded: Any) -> list[str] | None:
    """Conversations whose sources or header changed since the recorded pass (None: look
    at all of them, when there is no comparable record or much of the store changed)."""
    if not isinstance(recorded, list) or len(recorded) != 4 or None in (recorded[1], recorded[3]):
        return None
    s, c = t.sources, t.conversations
    sources_since = datetime.fromisoformat(recorded[1]) - LATE_COMMIT
    headers_since = datetime.fromisoformat(recorded[3]) - LATE_COMMIT
    changed = set(
        connection.execute(
            select(s.c.conversation_id)
            .where(s.c.source_type.in_(SOURCE_TYPES), s.c.updated_at >= sources_since)
            .distinct()
        ).scalars()
    )
    changed.update(
        connection.execute(
            select(c.c.conversation_id).where(c.c.updated_at >= headers_since)
        ).scalars()
    )
    return None if len(changed) > INCREMENTAL_CONVERSATIONS else sorted(changed)
