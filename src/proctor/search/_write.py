"""Writing index rows: documents (delete and insert, so a replaced one gets a new row id)
and their vectors, embedding only texts whose vector is not stored yet."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from proctor._util.clock import utcnow
from proctor.search._documents import digest
from proctor.search._encoder import SentenceEncoder, load_encoder
from proctor.store import _schema as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Encoder = SentenceEncoder | None | Literal["auto"]
"""An encoder, None for full text only, or ``"auto"``: the model when it is installed."""

CHUNK = 256
"""Documents per write transaction."""
IN_CLAUSE = 400
"""Ids per ``IN (...)`` clause, well under every backend's parameter limit."""


@dataclass(frozen=True, slots=True)
class Row:
    """One document row ready to write, with the text the encoder reads."""

    values: dict[str, Any]
    embed_text: str


def resolve_encoder(encoder: Encoder) -> SentenceEncoder | None:
    """The encoder to use for ``encoder`` (``"auto"``: the installed model, if any)."""
    return load_encoder() if encoder == "auto" else encoder


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in slices of ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def embed(
    rows: Sequence[Row], old: dict[str, tuple[str, bytes]], encoder: SentenceEncoder | None
) -> tuple[dict[str, tuple[str, bytes]], int]:
    """Vectors for ``rows`` (and how many were encoded): the stored one when its text is unchanged, else a new one."""
    if encoder is None:
        return {}, 0
    vectors: dict[str, tuple[str, bytes]] = {}
    todo: list[Row] = []
    for row in rows:
        key = row.values["doc_key"]
        text_hash = digest(row.embed_text)
        previous = old.get(key)
        if previous is not None and previous[0] == f"{encoder.name}:{text_hash}":
            vectors[key] = (text_hash, previous[1])
        else:
            todo.append(row)
    if todo:
        encoded = encoder.encode([row.embed_text for row in todo])
        for row, vector in zip(todo, encoded, strict=True):
            vectors[row.values["doc_key"]] = (digest(row.embed_text), vector_bytes(vector))
    return vectors, len(todo)


def vector_bytes(vector: NDArray[np.float32]) -> bytes:
    """A vector as stored: float32, little-endian."""
    return bytes(vector.astype("<f4").tobytes())


def replace_rows(
    connection: Connection,
    rows: Sequence[Row],
    vectors: dict[str, tuple[str, bytes]],
    encoder: SentenceEncoder | None,
) -> None:
    """Delete and re-insert ``rows`` (a new row id each time), then their vectors."""
    if not rows:
        return
    d = t.search_documents
    keys = [row.values["doc_key"] for row in rows]
    for chunk in chunks(keys, IN_CLAUSE):
        connection.execute(delete(d).where(d.c.doc_key.in_(list(chunk))))
    now = utcnow()
    connection.execute(insert(d), [row.values | {"indexed_at": now} for row in rows])
    if encoder is None or not vectors:
        return
    ids: dict[str, int] = {}
    for chunk in chunks(keys, IN_CLAUSE):
        for found in connection.execute(
            select(d.c.doc_key, d.c.row_id).where(d.c.doc_key.in_(list(chunk)))
        ):
            ids[found.doc_key] = found.row_id
    connection.execute(
        insert(t.search_vectors),
        [
            {"row_id": ids[key], "model": encoder.name, "text_hash": text_hash, "vector": blob}
            for key, (text_hash, blob) in vectors.items()
        ],
    )


def delete_rows(connection: Connection, row_ids: Sequence[int]) -> None:
    """Delete documents by row id (their vectors and full-text entries go with them)."""
    d = t.search_documents
    for chunk in chunks(list(row_ids), IN_CLAUSE):
        connection.execute(delete(d).where(d.c.row_id.in_(list(chunk))))
