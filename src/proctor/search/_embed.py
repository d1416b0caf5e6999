"""Sentence embeddings for the documents that lack them, a chunk at a time.

Even the ONNX encoder reads a few hundred documents a second at best, so a first index of
tens of thousands of messages takes minutes: far too long to wait for before a search.
Documents are therefore written for full text first (``_index.py``, ``_graph.py``) and get
their vectors here, afterwards: on the background indexer's thread in ``proctor serve``,
``proctor mcp`` and ``proctor watch`` (``_background.py``), in the detached indexer
``proctor ingest`` and ``proctor search`` start (``_handoff.py``), or to the end with
``proctor search --index-only``. Until a document has its vector, hybrid search ranks it
by full text alone, and every answer says how many documents are embedded.

Each chunk is read, encoded outside any transaction, then written in one short one; a
document replaced or removed meanwhile is skipped (its row id is gone) and picked up again
under its new row id.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Connection

from proctor.search._documents import digest, embedding_text
from proctor.search._encoder import TextEncoder
from proctor.search._unchanged import unless_changed
from proctor.search._write import Vector, add_vectors, vector_bytes
from proctor.store import SqlStore
from proctor.store import tables as t

EMBED_CHUNK = 8
"""Documents read, encoded and written together: at most a second or two of encoder time
even for long texts (256 word pieces each), so a server stops promptly."""

EmbedProgress = Callable[[int, int], None]
"""Called with (documents embedded, documents that lacked a vector at the start)."""


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """What one embedding pass did."""

    embedded: int
    """Documents that got a vector."""
    remaining: int
    """Documents still without one when the pass ended (0: the index is complete)."""
    seconds: float


def count_unembedded(connection: Connection, model: str) -> int:
    """Documents without a vector of ``model`` (a server's indexer asks every few seconds:
    counted again only when the database changed, ``_unchanged.py``)."""
    d, v = t.search_documents, t.search_vectors
    return unless_changed(
        connection,
        ("unembedded", model),
        lambda: int(
            connection.execute(
                select(func.count())
                .select_from(d.outerjoin(v, and_(v.c.row_id == d.c.row_id, v.c.model == model)))
                .where(v.c.row_id.is_(None))
            ).scalar_one()
        ),
    )


def count_embedded(connection: Connection, model: str) -> int:
    """Documents with a vector of ``model`` (counted again only when the database changed:
    ``_unchanged.py``)."""
    v = t.search_vectors
    return unless_changed(
        connection,
        ("embedded", model),
        lambda: int(
            connection.execute(
                select(func.count()).select_from(v).where(v.c.model == model)
            ).scalar_one()
        ),
    )


def _pending(
    connection: Connection, model: str, after_row_id: int, limit: int
) -> list[tuple[int, str]]:
    """(row id, text the encoder reads) of the next documents without a vector."""
    d, v, m = t.search_documents, t.search_vectors, t.messages
    found = connection.execute(
        select(d.c.row_id, d.c.doc_type, d.c.title, d.c.author, d.c.text, m.c.role)
        .select_from(
            d.outerjoin(v, and_(v.c.row_id == d.c.row_id, v.c.model == model)).outerjoin(
                m, and_(d.c.doc_type == "message", m.c.source_id == d.c.doc_id)
            )
        )
        .where(v.c.row_id.is_(None), d.c.row_id > after_row_id)
        .order_by(d.c.row_id)
        .limit(limit)
    ).all()
    return [
        (
            row.row_id,
            embedding_text(
                (row.author or row.role) if row.doc_type == "message" else row.title, row.text
            ),
        )
        for row in found
    ]


def embed_pending(
    store: SqlStore,
    encoder: TextEncoder,
    *,
    seconds: float | None = None,
    should_stop: Callable[[], bool] | None = None,
    progress: EmbedProgress | None = None,
    chunk: int = EMBED_CHUNK,
) -> EmbedReport:
    """Embed documents without a vector, oldest first, until none is left.

    Args:
        store: the store whose index to complete.
        encoder: the sentence encoder.
        seconds: stop after the chunk that passes this much time (None: no limit).
        should_stop: asked before each chunk; True stops the pass.
        progress: called after each written chunk.
        chunk: documents per chunk.
    """
    started = time.perf_counter()
    with store.repos.search.read() as connection:
        total = count_unembedded(connection, encoder.name)
    embedded = 0
    cursor = 0
    while total:
        if should_stop is not None and should_stop():
            break
        with store.repos.search.read() as connection:
            pending = _pending(connection, encoder.name, cursor, chunk)
        if not pending:
            break
        encoded = encoder.encode([text for _row_id, text in pending])
        vectors = {
            row_id: Vector(encoder.name, digest(text), vector_bytes(vector))
            for (row_id, text), vector in zip(pending, encoded, strict=True)
        }
        with store.repos.search.write() as connection:
            embedded += add_vectors(connection, vectors)
        cursor = pending[-1][0]
        if progress is not None:
            progress(embedded, total)
        # At least one chunk per call, so a pass given little time still advances.
        if seconds is not None and time.perf_counter() - started >= seconds:
            break
    with store.repos.search.read() as connection:
        remaining = count_unembedded(connection, encoder.name)
    return EmbedReport(
        embedded=embedded, remaining=remaining, seconds=time.perf_counter() - started
    )
