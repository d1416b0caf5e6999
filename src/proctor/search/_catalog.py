"""The in-memory copy of the index a long-running process ranks from: vectors, scope fields,
neighbours (only for a store given to ``hold_vectors``; other searches query the vectors
in the database, ``_vectors.py``).

Loaded on the first hybrid search of a process (every vector: 1.5 KB a document) and kept
per store object. When the index changes it is brought up to date, not read again:
documents added since are read with their vectors, removed ones dropped, and when vectors
were added to documents already held (the background embedder's work) only the vectors
of documents that had none are read. A long-running process pays the full load once.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Connection

from proctor._util.collector import freeze_what_lives
from proctor.search._asking import asks_column
from proctor.search._encoder import DIMENSIONS, TextEncoder
from proctor.search._fts5_top import indexed_rows
from proctor.search._unchanged import unless_changed
from proctor.search._write import GENERATION, IN_CLAUSE, chunks
from proctor.store import ReadStore
from proctor.store import tables as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from proctor.search._vectors import Scope


@dataclass(frozen=True, slots=True)
class _Rows:
    """The documents a catalog holds, ordered by row id, as read from the index."""

    row_ids: NDArray[np.int64]
    doc_types: tuple[str, ...]
    projects: tuple[str | None, ...]
    conversations: tuple[str | None, ...]
    positions: tuple[int | None, ...]
    authors: tuple[str | None, ...]
    """Tuples, not lists: a tuple holding only strings, numbers and None leaves the
    collector's care at its first collection, while a list of every document is walked by
    every full collection (five of 311,165 on the 1 GB store: 45–57 ms, landing in
    whichever search ran then)."""
    asks: NDArray[np.bool_]
    """Whether each document ends by asking a question (``_asking.py``)."""
    vectors: NDArray[np.float32]
    has_vector: NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every indexed document's scope fields, neighbours and vector, for scoring in numpy."""

    signature: tuple[Any, ...]
    rows: _Rows
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

    @property
    def documents(self) -> int:
        """How many documents the index held when this copy was made."""
        return len(self.row_ids)

    @property
    def embedded(self) -> int:
        """How many of them had a vector of the catalog's model."""
        return int(self.has_vector.sum())

    def where(self, field_name: str, values: Sequence[str | None]) -> NDArray[np.bool_]:
        """Rows whose ``field_name`` is one of ``values``."""
        import numpy as np

        wanted = [self.codes[field_name][v] for v in values if v in self.codes[field_name]]
        return np.isin(self.coded[field_name], wanted)

    def in_scope(self, scope: Scope) -> NDArray[np.bool_]:
        """Rows inside ``scope``: ``_vectors.in_scope`` over the held copy."""
        import numpy as np

        inside = np.ones(len(self.row_ids), dtype=bool)
        if scope.project_id is not None:
            inside &= self.where("project_id", [scope.project_id])
        if scope.conversation_id is not None:
            inside &= self.where("conversation_id", [scope.conversation_id])
        if scope.doc_types:
            inside &= self.where("doc_type", scope.doc_types)
        return inside


_catalogs: weakref.WeakKeyDictionary[ReadStore, Catalog] = weakref.WeakKeyDictionary()
_held: weakref.WeakSet[ReadStore] = weakref.WeakSet()


def hold_vectors(store: ReadStore) -> None:
    """Rank this store's searches from an in-memory copy of the index (a long-running
    process: the copy is read once, then kept up to date; 1.5 KB a document)."""
    _held.add(store)


def holds_vectors(store: ReadStore) -> bool:
    """Whether searches of this store rank from the in-memory copy."""
    return store in _held


_loading = threading.Lock()


def _signature(connection: Connection, model: str) -> tuple[Any, ...]:
    """The index's signature (``index_signature``) and the encoder's name."""
    return (*index_signature(connection), model)


def index_signature(connection: Connection) -> tuple[Any, ...]:
    """Changes whenever a document is added or removed, or vectors are added.

    A replaced document is deleted and inserted again, so it gets a new, higher row id;
    SQLite's AUTOINCREMENT never reuses one. Vectors added to stored documents raise the
    generation counter (``_write.add_vectors``). On SQLite the documents are not counted:
    FTS5 keeps their number (``indexed_rows``; counting 311,165 took 25-30 ms, paid by the
    first search of each connection after every write to the store); elsewhere counting
    uses an index, never the vectors. Read again only when the database changed
    (``_unchanged.py``).
    """
    d, state = t.search_documents, t.search_state

    def counted() -> tuple[Any, ...]:
        last = connection.execute(select(func.max(d.c.row_id))).scalar_one_or_none()
        held = indexed_rows(connection) if connection.dialect.name == "sqlite" else None
        if held is None:
            held = connection.execute(select(func.count(d.c.doc_type))).scalar_one()
        generation = connection.execute(
            select(state.c.value).where(state.c.name == GENERATION)
        ).scalar_one_or_none()
        return (held, last, generation)

    return unless_changed(connection, "catalog signature", counted)


def load_catalog(store: ReadStore, encoder: TextEncoder) -> Catalog:
    """The in-memory copy of the index, brought up to date when the index changed."""
    with _loading, store.repos.search.read() as connection:
        signature = _signature(connection, encoder.name)
        cached = _catalogs.get(store)
        if cached is not None and cached.signature == signature:
            return cached
        if cached is None or cached.signature[-1] != encoder.name:
            catalog = _build(signature, _read_rows(connection, encoder.name, None))
        else:
            rows, same_documents = _refresh(connection, cached, encoder.name)
            # Only vectors were added: scope fields and neighbours stay as they are.
            catalog = (
                dataclasses.replace(
                    cached,
                    signature=signature,
                    rows=rows,
                    vectors=rows.vectors,
                    has_vector=rows.has_vector,
                )
                if same_documents
                else _build(signature, rows)
            )
    _catalogs[store] = catalog
    freeze_what_lives()  # in a server: the catalog and the modules searching imported
    return catalog


def _columns(model: str) -> Any:
    d, v = t.search_documents, t.search_vectors
    return select(
        d.c.row_id,
        d.c.doc_type,
        d.c.project_id,
        d.c.conversation_id,
        d.c.position,
        d.c.author,
        asks_column(d).label("asks"),
        v.c.vector,
    ).select_from(d.outerjoin(v, and_(v.c.row_id == d.c.row_id, v.c.model == model)))


def _read_rows(connection: Connection, model: str, row_ids: Sequence[int] | None) -> _Rows:
    """Documents with their vectors: every one (``row_ids`` None) or these."""
    d = t.search_documents
    if row_ids is None:
        found = connection.execute(_columns(model).order_by(d.c.row_id)).all()
    else:
        found = []
        for chunk in chunks(sorted(row_ids), IN_CLAUSE):
            found += connection.execute(
                _columns(model).where(d.c.row_id.in_(list(chunk))).order_by(d.c.row_id)
            ).all()
    return _rows_of(found)


def _rows_of(found: Sequence[Any]) -> _Rows:
    import numpy as np

    has_vector = np.array([row.vector is not None for row in found], dtype=bool)
    vectors = np.zeros((len(found), DIMENSIONS), dtype=np.float32)
    blobs = b"".join(bytes(row.vector) for row in found if row.vector is not None)
    vectors[has_vector] = np.frombuffer(blobs, dtype="<f4").reshape(-1, DIMENSIONS)
    return _Rows(
        row_ids=np.array([row.row_id for row in found], dtype=np.int64),
        doc_types=tuple([row.doc_type for row in found]),
        projects=tuple([row.project_id for row in found]),
        conversations=tuple([row.conversation_id for row in found]),
        positions=tuple([row.position for row in found]),
        authors=tuple([row.author for row in found]),
        asks=np.array([bool(row.asks) for row in found], dtype=bool),
        vectors=vectors,
        has_vector=has_vector,
    )


def _refresh(connection: Connection, cached: Catalog, model: str) -> tuple[_Rows, bool]:
    """``cached``'s rows brought up to date: removed dropped, added read, new vectors read;
    and whether the documents are the same ones (only vectors were added)."""
    import numpy as np

    d, v = t.search_documents, t.search_vectors
    old = cached.rows
    current = np.array(sorted(connection.execute(select(d.c.row_id)).scalars()), dtype=np.int64)
    keep = np.isin(old.row_ids, current)
    added = current[~np.isin(current, old.row_ids)]
    same = bool(keep.all())
    # Boolean indexing copies; the cached arrays are never written to.
    row_ids = old.row_ids if same else old.row_ids[keep]
    vectors = old.vectors if same else old.vectors[keep]
    has_vector = old.has_vector if same else old.has_vector[keep]
    if cached.signature[2] != _generation_of(connection):
        at = {int(row_id): index for index, row_id in enumerate(row_ids)}
        found: dict[int, bytes] = {}
        for chunk in chunks([int(i) for i in row_ids[~has_vector]], IN_CLAUSE):
            for row in connection.execute(
                select(v.c.row_id, v.c.vector).where(
                    v.c.row_id.in_(list(chunk)), v.c.model == model
                )
            ):
                found[at[row.row_id]] = bytes(row.vector)
        if found:
            vectors = vectors.copy() if same else vectors
            has_vector = has_vector.copy() if same else has_vector
            for index, blob in found.items():
                vectors[index] = np.frombuffer(blob, dtype="<f4")
                has_vector[index] = True
    if same and not len(added):
        return dataclasses.replace(old, vectors=vectors, has_vector=has_vector), True
    picked = [int(i) for i in np.flatnonzero(keep)]
    kept = _Rows(
        row_ids=row_ids,
        doc_types=tuple([old.doc_types[i] for i in picked]),
        projects=tuple([old.projects[i] for i in picked]),
        conversations=tuple([old.conversations[i] for i in picked]),
        positions=tuple([old.positions[i] for i in picked]),
        authors=tuple([old.authors[i] for i in picked]),
        asks=old.asks[keep],
        vectors=vectors,
        has_vector=has_vector,
    )
    if not len(added):
        return kept, False
    return _merge(kept, _read_rows(connection, model, [int(i) for i in added])), False


def _generation_of(connection: Connection) -> Any:
    state = t.search_state
    return connection.execute(
        select(state.c.value).where(state.c.name == GENERATION)
    ).scalar_one_or_none()


def _merge(first: _Rows, second: _Rows) -> _Rows:
    """Both sets of rows, ordered by row id."""
    import numpy as np

    row_ids = np.concatenate([first.row_ids, second.row_ids])
    order = np.argsort(row_ids, kind="stable")

    def pick(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        joined = a + b
        return tuple([joined[i] for i in order])

    return _Rows(
        row_ids=row_ids[order],
        doc_types=pick(first.doc_types, second.doc_types),
        projects=pick(first.projects, second.projects),
        conversations=pick(first.conversations, second.conversations),
        positions=pick(first.positions, second.positions),
        authors=pick(first.authors, second.authors),
        asks=np.concatenate([first.asks, second.asks])[order],
        vectors=np.concatenate([first.vectors, second.vectors])[order],
        has_vector=np.concatenate([first.has_vector, second.has_vector])[order],
    )


def _build(signature: tuple[Any, ...], rows: _Rows) -> Catalog:
    import numpy as np

    count = len(rows.row_ids)
    codes: dict[str, dict[str | None, int]] = {}
    coded: dict[str, NDArray[np.int64]] = {}
    for field_name, values in (
        ("doc_type", rows.doc_types),
        ("project_id", rows.projects),
        ("conversation_id", rows.conversations),
    ):
        mapping: dict[str | None, int] = {}
        coded[field_name] = np.array(
            [mapping.setdefault(value, len(mapping)) for value in values], dtype=np.int64
        )
        codes[field_name] = mapping
    at = {
        (conversation_id, position): index
        for index, (conversation_id, position) in enumerate(
            zip(rows.conversations, rows.positions, strict=True)
        )
        if conversation_id is not None and position is not None
    }
    before = np.full(count, -1, dtype=np.int64)
    after = np.full(count, -1, dtype=np.int64)
    for (conversation_id, position), index in at.items():
        before[index] = at.get((conversation_id, position - 1), -1)
        after[index] = at.get((conversation_id, position + 1), -1)
    return Catalog(
        signature=signature,
        rows=rows,
        row_ids=rows.row_ids,
        index_of={int(row_id): index for index, row_id in enumerate(rows.row_ids)},
        vectors=rows.vectors,
        has_vector=rows.has_vector,
        codes=codes,
        coded=coded,
        by_author=_by_author(rows.authors),
        before=before,
        after=after,
    )


def _by_author(authors: Sequence[str | None]) -> dict[str, NDArray[np.int64]]:
    import numpy as np

    rows: dict[str, list[int]] = {}
    for index, author in enumerate(authors):
        if author:
            rows.setdefault(author, []).append(index)
    return {author: np.array(found, dtype=np.int64) for author, found in rows.items()}
