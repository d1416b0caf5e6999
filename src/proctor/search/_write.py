"""Writing index rows: documents upserted by ``doc_key`` and vectors added to them.

A document is upserted by deleting the row its key names and inserting it again, so a
replaced document gets a new row id (the in-memory catalog notices by the highest row
id) and its full-text entry follows by trigger. A vector whose text did not change is
carried over to the new row. Writes of several processes (``proctor serve``,
``proctor mcp``, ``proctor search``) may meet: on PostgreSQL every index write takes one
transaction-level advisory lock first, on SQLite the single writer serialises them, so
each sees the others' rows and none collides on a key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.engine import Connection

from proctor._util.clock import utcnow
from proctor.search._documents import digest
from proctor.search._encoder import TextEncoder, load_encoder
from proctor.store import insert_rows
from proctor.store import tables as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Encoder = TextEncoder | None | Literal["auto"]
"""An encoder, None for full text only, or ``"auto"``: the model when it is installed."""

CHUNK = 256
"""Documents per write transaction."""
IN_CLAUSE = 400
"""Ids per ``IN (...)`` clause, well under every backend's parameter limit."""
INDEX_LOCK = 0x50524F43  # "PROC"
"""PostgreSQL advisory lock key every index write transaction holds."""
GENERATION = "vectors_generation"
"""``search_state`` name of a counter raised whenever vectors are added to stored rows."""


@dataclass(frozen=True, slots=True)
class Row:
    """One document row ready to write, with the text the encoder reads."""

    values: dict[str, Any]
    embed_text: str


@dataclass(frozen=True, slots=True)
class Vector:
    """A document's embedding as stored."""

    model: str
    text_hash: str
    blob: bytes


def resolve_encoder(encoder: Encoder) -> TextEncoder | None:
    """The encoder to use for ``encoder`` (``"auto"``: the installed model, if any)."""
    return load_encoder() if encoder == "auto" else encoder


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in slices of ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def lock_index(connection: Connection) -> None:
    """Serialise index writers (PostgreSQL; SQLite's writer lock already does)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": INDEX_LOCK})


def embed(rows: Sequence[Row], encoder: TextEncoder | None) -> dict[str, Vector]:
    """A vector for each row (by ``doc_key``); none without an encoder."""
    if encoder is None or not rows:
        return {}
    encoded = encoder.encode([row.embed_text for row in rows])
    return {
        row.values["doc_key"]: Vector(encoder.name, digest(row.embed_text), vector_bytes(vector))
        for row, vector in zip(rows, encoded, strict=True)
    }


def vector_bytes(vector: NDArray[np.float32]) -> bytes:
    """A vector as stored: float32, little-endian."""
    return bytes(vector.astype("<f4").tobytes())


def upsert_rows(
    connection: Connection, rows: Sequence[Row], vectors: Mapping[str, Vector] | None = None
) -> int:
    """Insert or replace ``rows`` by ``doc_key`` (the last row of a repeated key wins).

    Each replaced document keeps its vector when the text the encoder reads is the same;
    ``vectors`` (by ``doc_key``) gives new ones. Returns how many documents were written.

    Only documents already in the index are looked at (their vectors, a digest of the new
    text) and deleted; the rows are then inserted in one plain ``executemany``, bound as
    SQLAlchemy binds them: writing new documents costs the database's work and little more.
    """
    if not rows:
        return 0
    latest = {row.values["doc_key"]: row for row in rows}
    lock_index(connection)
    d, v = t.search_documents, t.search_vectors
    replaced: list[int] = []
    kept: dict[str, Vector] = {}
    for chunk in chunks(list(latest), IN_CLAUSE):
        for key, row_id, model, text_hash, blob in connection.execute(
            _INDEXED, {"keys": list(chunk)}
        ):
            replaced.append(row_id)
            if text_hash is not None and text_hash == digest(latest[key].embed_text):
                kept[key] = Vector(model, text_hash, bytes(blob))
    for chunk in chunks(replaced, IN_CLAUSE):
        connection.execute(delete(d).where(d.c.row_id.in_(list(chunk))))
    now = utcnow()
    values = [row.values | {"indexed_at": now} for row in latest.values()]
    keys = values[0].keys()
    if all(value.keys() == keys for value in values):
        insert_rows(connection, d, values)
    else:  # rows of different columns: SQLAlchemy's executemany as before
        connection.execute(insert(d), values)
    wanted = kept | {key: vector for key, vector in (vectors or {}).items() if key in latest}
    if wanted:
        ids = _row_ids(connection, list(wanted))
        connection.execute(
            insert(v),
            [
                {
                    "row_id": ids[key],
                    "model": vector.model,
                    "text_hash": vector.text_hash,
                    "vector": vector.blob,
                }
                for key, vector in wanted.items()
            ],
        )
    return len(latest)


_INDEXED = (
    select(
        t.search_documents.c.doc_key,
        t.search_documents.c.row_id,
        t.search_vectors.c.model,
        t.search_vectors.c.text_hash,
        t.search_vectors.c.vector,
    )
    .select_from(
        t.search_documents.outerjoin(
            t.search_vectors, t.search_vectors.c.row_id == t.search_documents.c.row_id
        )
    )
    .where(t.search_documents.c.doc_key.in_(bindparam("keys", expanding=True)))
)
"""The documents among ``keys`` already in the index, each with its vector if it has one."""


def _row_ids(connection: Connection, keys: Sequence[str]) -> dict[str, int]:
    d = t.search_documents
    ids: dict[str, int] = {}
    for chunk in chunks(keys, IN_CLAUSE):
        for found in connection.execute(
            select(d.c.doc_key, d.c.row_id).where(d.c.doc_key.in_(list(chunk)))
        ):
            ids[found.doc_key] = found.row_id
    return ids


def add_vectors(connection: Connection, vectors: Mapping[int, Vector]) -> int:
    """Store vectors for documents by row id; a row replaced or removed since is skipped.

    Returns how many were stored. Raises the generation counter the in-memory catalog
    watches, since no document row changed.
    """
    if not vectors:
        return 0
    lock_index(connection)
    d, v = t.search_documents, t.search_vectors
    present: set[int] = set()
    for chunk in chunks(list(vectors), IN_CLAUSE):
        present.update(
            connection.execute(select(d.c.row_id).where(d.c.row_id.in_(list(chunk)))).scalars()
        )
        connection.execute(delete(v).where(v.c.row_id.in_(list(chunk))))
    if not present:
        return 0
    connection.execute(
        insert(v),
        [
            {
                "row_id": row_id,
                "model": vector.model,
                "text_hash": vector.text_hash,
                "vector": vector.blob,
            }
            for row_id, vector in vectors.items()
            if row_id in present
        ],
    )
    _raise_generation(connection)
    return len(present)


def _raise_generation(connection: Connection) -> None:
    state = t.search_state
    current = connection.execute(
        select(state.c.value).where(state.c.name == GENERATION)
    ).scalar_one_or_none()
    if current is None:
        connection.execute(insert(state).values(name=GENERATION, value=1, updated_at=utcnow()))
    else:
        connection.execute(
            update(state)
            .where(state.c.name == GENERATION)
            .values(value=int(current) + 1, updated_at=utcnow())
        )


def delete_rows(connection: Connection, row_ids: Sequence[int]) -> None:
    """Delete documents by row id (their vectors and full-text entries go with them)."""
    if not row_ids:
        return
    lock_index(connection)
    d = t.search_documents
    for chunk in chunks(list(row_ids), IN_CLAUSE):
        connection.execute(delete(d).where(d.c.row_id.in_(list(chunk))))
