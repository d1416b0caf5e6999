"""The in-memory copy of the index hybrid ranking works on: vectors, scope fields, neighbours.

Loaded on the first hybrid search of a process (every vector: 1.5 KB a document) and
reloaded when a document was added or removed since; kept per store object.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from proctor.search._encoder import DIMENSIONS, SentenceEncoder
from proctor.store import SqlStore
from proctor.store import _schema as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every indexed document's scope fields, neighbours and vector, for scoring in numpy."""

    signature: tuple[Any, ...]
    row_ids: NDArray[np.int64]
    index_of: dict[int, int]
    vectors: NDArray[np.float32]
    has_vector: NDArray[np.bool_]
    codes: dict[str, dict[str | None, int]]
    """Per scope field (doc_type, project_id, conversation_id): value → integer code."""
    coded: dict[str, NDArray[np.int64]]
    """Per scope field: each document's code."""
    by_author: dict[str, NDArray[np.int64]]
    """Rows of each author."""
    before: NDArray[np.int64]
    after: NDArray[np.int64]

    def where(self, field_name: str, values: Sequence[str | None]) -> NDArray[np.bool_]:
        """Rows whose ``field_name`` is one of ``values``."""
        import numpy as np

        wanted = [self.codes[field_name][v] for v in values if v in self.codes[field_name]]
        return np.isin(self.coded[field_name], wanted)


_catalogs: weakref.WeakKeyDictionary[SqlStore, Catalog] = weakref.WeakKeyDictionary()


def _signature(connection: Connection, model: str) -> tuple[Any, ...]:
    """Changes whenever a document is added or removed (vectors change with their document).

    A replaced document is deleted and inserted again, so it gets a new, higher row id;
    SQLite's AUTOINCREMENT never reuses one. Counting uses an index, never the vectors.
    """
    d = t.search_documents
    documents = connection.execute(select(func.count(d.c.doc_type), func.max(d.c.row_id))).one()
    return (*documents, model)


def load_catalog(store: SqlStore, encoder: SentenceEncoder) -> Catalog:
    """The in-memory copy of the index, reloaded when a document was added or removed."""
    import numpy as np

    with store._read() as connection:
        signature = _signature(connection, encoder.name)
        cached = _catalogs.get(store)
        if cached is not None and cached.signature == signature:
            return cached
        d, v = t.search_documents, t.search_vectors
        rows = connection.execute(
            select(
                d.c.row_id,
                d.c.doc_type,
                d.c.project_id,
                d.c.conversation_id,
                d.c.position,
                d.c.author,
                v.c.vector,
            )
            .select_from(d.outerjoin(v, (v.c.row_id == d.c.row_id) & (v.c.model == encoder.name)))
            .order_by(d.c.row_id)
        ).all()
    count = len(rows)
    has_vector = np.array([row.vector is not None for row in rows], dtype=bool)
    vectors = np.zeros((count, DIMENSIONS), dtype=np.float32)
    blobs = b"".join(bytes(row.vector) for row in rows if row.vector is not None)
    vectors[has_vector] = np.frombuffer(blobs, dtype="<f4").reshape(-1, DIMENSIONS)
    codes: dict[str, dict[str | None, int]] = {}
    coded: dict[str, NDArray[np.int64]] = {}
    for field_name in ("doc_type", "project_id", "conversation_id"):
        mapping: dict[str | None, int] = {}
        coded[field_name] = np.array(
            [mapping.setdefault(getattr(row, field_name), len(mapping)) for row in rows],
            dtype=np.int64,
        )
        codes[field_name] = mapping
    at = {
        (row.conversation_id, row.position): index
        for index, row in enumerate(rows)
        if row.conversation_id is not None and row.position is not None
    }
    before = np.full(count, -1, dtype=np.int64)
    after = np.full(count, -1, dtype=np.int64)
    for (conversation_id, position), index in at.items():
        before[index] = at.get((conversation_id, position - 1), -1)
        after[index] = at.get((conversation_id, position + 1), -1)
    row_ids = np.array([row.row_id for row in rows], dtype=np.int64)
    catalog = Catalog(
        signature=signature,
        row_ids=row_ids,
        index_of={int(row_id): index for index, row_id in enumerate(row_ids)},
        vectors=vectors,
        has_vector=has_vector,
        codes=codes,
        coded=coded,
        by_author=_by_author([row.author for row in rows]),
        before=before,
        after=after,
    )
    _catalogs[store] = catalog
    return catalog


def _by_author(authors: Sequence[str | None]) -> dict[str, NDArray[np.int64]]:
    import numpy as np

    rows: dict[str, list[int]] = {}
    for index, author in enumerate(authors):
        if author:
            rows.setdefault(author, []).append(index)
    return {author: np.array(found, dtype=np.int64) for author, found in rows.items()}
