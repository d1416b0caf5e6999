"""Graph objects in the index: entities, events, story lines from the review pipeline."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any

from sqlalchemy import delete, exists, func, insert, literal, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from proctor._util.clock import utcnow
from proctor.search._documents import (
    GRAPH_REFS,
    SOURCE_TYPES,
    SearchDocument,
    SourceRef,
    doc_key,
    embedding_text,
    entity_document,
    event_document,
    object_body,
    story_line_document,
)
from proctor.search._write import (
    CHUNK,
    IN_CLAUSE,
    Encoder,
    Row,
    chunks,
    embed,
    lock_index,
    resolve_encoder,
    upsert_rows,
)
from proctor.store import SqlStore
from proctor.store import tables as t


def index_graph_objects(
    target: SqlStore | Connection,
    docs: Iterable[SearchDocument],
    *,
    encoder: Encoder = None,
) -> int:
    """Add or replace graph objects (entities, events, story lines, …) in the index.

    ``target`` is the store (one transaction of its own) or the connection of a
    transaction already open, e.g. the review's publish transaction, so the index changes
    with the graph or not at all. Documents are upserted by ``doc_key``: one already in
    the index is replaced, and when ``docs`` repeats a key (a story line a review both
    continues and re-derives) the last one counts. Without an encoder (the default) they
    are written for full text and get their vectors later, with the sources'
    (``embed_pending``); with one they are embedded before the write. Returns how many
    documents were written.
    """
    documents = list(docs)
    for document in documents:
        if document.doc_type in SOURCE_TYPES:
            raise ValueError(f"{document.doc_type!r} documents are indexed by index_sources")
    chosen = resolve_encoder(encoder)
    rows = [
        Row(
            values={
                "doc_key": document.doc_key,
                "doc_type": document.doc_type,
                "doc_id": document.doc_id,
                "project_id": document.project_id,
                "conversation_id": document.conversation_id,
                "position": None,
                "author": None,
                "title": document.title,
                "text": document.text,
                "body": object_body(document.title, document.text, document.occurred_at),
                "context": "",
                "occurred_at": document.occurred_at,
                "source_refs": [ref.as_json() for ref in document.source_refs],
                "basis": _basis(document),
            },
            embed_text=embedding_text(document.title, document.text),
        )
        for document in documents
    ]
    latest = list({row.values["doc_key"]: row for row in rows}.values())
    vectors = embed(latest, chosen)

    def write(connection: Connection) -> None:
        upsert_rows(connection, latest, vectors)

    _in_transaction(target, write)
    return len(latest)


def _basis(document: SearchDocument) -> str:
    """``digest(title, text, occurred_at, project_id)`` in one hash update: the same bytes
    (each part's ``repr``, then a NUL) as ``digest`` feeds its hasher part by part."""
    data = (
        f"{document.title!r}\0{document.text!r}\0{document.occurred_at!r}\0"
        f"{document.project_id!r}\0"
    )
    return blake2b(data.encode(), digest_size=16).hexdigest()


def remove_graph_objects(
    target: SqlStore | Connection, doc_type: str, doc_ids: Iterable[str]
) -> None:
    """Take graph objects out of the index (a removed entity, a superseded event)."""
    keys = [doc_key(doc_type, doc_id) for doc_id in doc_ids]
    d = t.search_documents

    def write(connection: Connection) -> None:
        lock_index(connection)
        for chunk in chunks(keys, IN_CLAUSE):
            connection.execute(delete(d).where(d.c.doc_key.in_(list(chunk))))

    _in_transaction(target, write)


def _in_transaction(target: SqlStore | Connection, write: Callable[[Connection], None]) -> None:
    if isinstance(target, Connection):
        write(target)
        return
    with target.repos.search.write() as connection:
        write(connection)


# -- graph objects a publish left out of the index ----------------------------------------

_GRAPH_SIGNATURE = "graph_signature"


def missing_graph_documents(connection: Connection) -> GraphRepair | None:
    """The entities, events and story lines that have no document, or None when nothing
    was published since the last check (one statement)."""
    signature, recorded = _graph_signature(connection)
    if recorded == signature:
        return None
    return GraphRepair(signature, _missing(connection))


@dataclass(frozen=True, slots=True)
class GraphRepair:
    """Graph objects a publish left out of the index, and the graph signature then."""

    signature: list[int]
    documents: list[SearchDocument]


def repair_graph_documents(store: SqlStore, repair: GraphRepair) -> int:
    """Index the missing graph objects, then record the signature; how many were written.

    A review writes its graph's documents in its publish transaction; results published
    before that (when a failed index update could leave a result unsearchable) are
    repaired by the next full-text pass.
    """
    written = 0
    for chunk in chunks(repair.documents, CHUNK):
        written += index_graph_objects(store, chunk, encoder=None)
    with store.repos.search.write() as connection:
        lock_index(connection)
        state = t.search_state
        connection.execute(delete(state).where(state.c.name == _GRAPH_SIGNATURE))
        connection.execute(
            insert(state).values(name=_GRAPH_SIGNATURE, value=repair.signature, updated_at=utcnow())
        )
    return written


def _graph_signature(connection: Connection) -> tuple[list[int], Any]:
    """The graph's object and result counts, and the ones recorded: one statement."""
    state = t.search_state
    counts = [
        select(func.count()).select_from(table).scalar_subquery()
        for table in (t.entities, t.graph_events, t.story_lines, t.results)
    ]
    recorded = select(state.c.value).where(state.c.name == _GRAPH_SIGNATURE).scalar_subquery()
    row = connection.execute(select(*counts, recorded)).one()
    return [int(value) for value in row[:-1]], row[-1]


def _unindexed(doc_type: str, id_column: ColumnElement[str]) -> ColumnElement[bool]:
    d = t.search_documents
    return ~exists().where(d.c.doc_key == literal(f"{doc_type}:") + id_column)


def _missing(connection: Connection) -> list[SearchDocument]:
    e, v, s = t.entities, t.graph_events, t.story_lines
    entities = connection.execute(
        select(e.c.entity_id, e.c.project_id, e.c.kind, e.c.name, e.c.description).where(
            _unindexed("entity", e.c.entity_id)
        )
    ).all()
    events = connection.execute(
        select(v.c.event_id, v.c.project_id, v.c.title, v.c.summary, v.c.occurred_at).where(
            _unindexed("event", v.c.event_id)
        )
    ).all()
    lines = connection.execute(
        select(s.c.story_line_id, s.c.project_id, s.c.title, s.c.summary).where(
            _unindexed("story_line", s.c.story_line_id)
        )
    ).all()
    refs = _source_refs(connection, "entity", [row.entity_id for row in entities])
    refs |= _source_refs(connection, "event", [row.event_id for row in events])
    return [
        *(entity_document(*row, refs.get(("entity", row.entity_id), ())) for row in entities),
        *(event_document(*row, refs.get(("event", row.event_id), ())) for row in events),
        *(story_line_document(*row) for row in lines),
    ]


def _source_refs(
    connection: Connection, object_type: str, object_ids: Sequence[str]
) -> dict[tuple[str, str], tuple[SourceRef, ...]]:
    """The first sources behind each object, as a publish would have indexed them."""
    r = t.source_refs
    found: dict[tuple[str, str], dict[SourceRef, None]] = {}
    for chunk in chunks(list(object_ids), IN_CLAUSE):
        for row in connection.execute(
            select(r.c.object_id, r.c.source_type, r.c.source_id)
            .where(r.c.object_type == object_type, r.c.object_id.in_(list(chunk)))
            .order_by(r.c.ref_id)
        ):
            refs = found.setdefault((object_type, row.object_id), {})
            if len(refs) < GRAPH_REFS:
                refs[SourceRef(row.source_type, row.source_id)] = None
    return {key: tuple(refs) for key, refs in found.items()}
