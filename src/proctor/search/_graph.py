"""Graph objects in the index: entities, events, story lines from the review pipeline."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import delete
from sqlalchemy.engine import Connection

from proctor.search._documents import (
    SOURCE_TYPES,
    SearchDocument,
    digest,
    doc_key,
    embedding_text,
    object_body,
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
from proctor.store import _schema as t


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
                "basis": digest(
                    document.title, document.text, document.occurred_at, document.project_id
                ),
            },
            embed_text=embedding_text(document.title, document.text),
        )
        for document in documents
    ]
    latest = list({row.values["doc_key"]: row for row in rows}.values())
    vectors = embed(latest, chosen)

    def write(connection: Connection) -> None:
        for chunk in chunks(latest, CHUNK):
            upsert_rows(connection, chunk, vectors)

    _in_transaction(target, write)
    return len(latest)


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
    with target._write() as connection:
        write(connection)
