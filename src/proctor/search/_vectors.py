"""Vectors queried where they live: the nearest documents to a query, in the database.

A search needs, of the vectors in scope, the ``k`` most similar to the query and the
lowest and highest similarity (hybrid ranking min-max normalises over the scope). Nothing
else is read: no copy of the whole index is kept, and a single search's memory stays at one
chunk of vectors.

- SQLite with ``sqlite-vec`` (the ``embeddings`` extra): the similarity is computed in SQL
  by ``vec_distance_cosine`` over the stored float32 blobs (they are sqlite-vec's own
  format), filtered by project, conversation and type in the same statement; only ``k``
  rows come back. The extension is loaded into each connection with
  ``enable_load_extension`` where Python's ``sqlite3`` allows it, else registered once per
  process with SQLite's ``sqlite3_auto_extension`` (CPython builds without loadable
  extensions, like pyenv's default, still link the system's SQLite).
- Otherwise (no sqlite-vec; PostgreSQL, whose stored vectors are ``bytea``): a streaming
  scan in chunks of ``SCAN_CHUNK`` rows, each multiplied in numpy and dropped, keeping a
  running top ``k`` and the extremes. A process that searches the same scope of the same
  store again while the index is unchanged (an evaluation's hundreds of questions per
  conversation, a long-running server) keeps that scope's vectors from then on
  (``_HeldScopes``): read once more, then multiplied from memory until the index changes
  (documents added or removed, vectors added: the signature ``_catalog.py`` watches too).
  At most ``HELD_VECTORS`` vectors are kept over every store and scope of the process,
  the least recently searched scope going first; a one-off search still holds one chunk.

``vectors_of`` reads the vectors of a few documents by row id (the candidates' neighbours).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, and_, func, select, text
from sqlalchemy.engine import Connection, Engine

from proctor.search._encoder import DIMENSIONS
from proctor.search._unchanged import unless_changed
from proctor.search._write import GENERATION, IN_CLAUSE, chunks
from proctor.store import tables as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

SCAN_CHUNK = 2_048
"""Vectors held at once by the streaming scan (3 MB)."""

HELD_VECTORS = 32_768
"""Vectors a process keeps between searches, over every store and scope (48 MB)."""

SCOPES_KNOWN = 1_024
"""Scopes a process remembers having searched (to keep one when it is searched again)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Which documents a search looks at (None: no restriction)."""

    project_id: str | None
    conversation_id: str | None
    doc_types: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Nearest:
    """The ``k`` documents most similar to a query, best first, and the range over scope."""

    top: list[tuple[int, float]]
    """(row id, cosine similarity), most similar first (ties: lower row id first)."""
    low: float
    high: float
    scanned: int
    """Vectors in scope (compared in SQL or in the scan)."""
    method: str
    """``sqlite-vec`` or ``scan``."""


def in_scope(statement: Select[Any], scope: Scope) -> Select[Any]:
    """``statement`` (over ``search_documents``) restricted to ``scope``."""
    d = t.search_documents
    if scope.project_id is not None:
        statement = statement.where(d.c.project_id == scope.project_id)
    if scope.conversation_id is not None:
        statement = statement.where(d.c.conversation_id == scope.conversation_id)
    if scope.doc_types:
        statement = statement.where(d.c.doc_type.in_(list(scope.doc_types)))
    return statement


def scope_filters(scope: Scope) -> tuple[str, dict[str, Any]]:
    """``in_scope`` for textual SQL: ``AND`` conditions on ``search_documents AS d`` and
    their bound values (each document type its own parameter)."""
    filters: list[str] = []
    params: dict[str, Any] = {}
    if scope.project_id is not None:
        filters.append("AND d.project_id = :project_id")
        params["project_id"] = scope.project_id
    if scope.conversation_id is not None:
        filters.append("AND d.conversation_id = :conversation_id")
        params["conversation_id"] = scope.conversation_id
    if scope.doc_types:
        names = [f":type_{i}" for i in range(len(scope.doc_types))]
        filters.append(f"AND d.doc_type IN ({', '.join(names)})")
        params |= {f"type_{i}": value for i, value in enumerate(scope.doc_types)}
    return " ".join(filters), params


def nearest(
    connection: Connection,
    query: NDArray[np.float32],
    model: str,
    scope: Scope,
    k: int,
    *,
    chunk: int = SCAN_CHUNK,
    allow_extension: bool = True,
) -> Nearest:
    """The ``k`` vectors of ``model`` in ``scope`` most similar to the unit vector ``query``."""
    if allow_extension and has_sqlite_vec(connection):
        return _nearest_sql(connection, query, model, scope, k)
    return _HELD.nearest(connection, query, model, scope, k, chunk)


def _scoped(scope: Scope) -> bool:
    return scope != Scope(None, None, None)


def _vector_rows(model: str, scope: Scope) -> Select[Any]:
    d, v = t.search_documents, t.search_vectors
    statement = select(v.c.row_id, v.c.vector).where(v.c.model == model)
    if not _scoped(scope):  # every vector row names a document: no join needed
        return statement
    return in_scope(statement.select_from(v.join(d, d.c.row_id == v.c.row_id)), scope)


def _nearest_scan(
    connection: Connection,
    query: NDArray[np.float32],
    model: str,
    scope: Scope,
    k: int,
    chunk: int,
) -> Nearest:
    import numpy as np

    best_ids = np.zeros(0, dtype=np.int64)
    best_sims = np.zeros(0, dtype=np.float32)
    low, high, scanned = np.inf, -np.inf, 0
    result = connection.execution_options(stream_results=True, yield_per=chunk).execute(
        _vector_rows(model, scope)
    )
    for part in result.partitions(chunk):
        ids = np.fromiter((row[0] for row in part), dtype=np.int64, count=len(part))
        matrix = np.frombuffer(b"".join(bytes(row[1]) for row in part), dtype="<f4")
        sims = matrix.reshape(len(part), DIMENSIONS) @ query
        scanned += len(part)
        low, high = min(low, float(sims.min())), max(high, float(sims.max()))
        ids = np.concatenate([best_ids, ids])
        sims = np.concatenate([best_sims, sims.astype(np.float32)])
        if len(ids) > k:
            keep = np.argpartition(-sims, k - 1)[:k]
            ids, sims = ids[keep], sims[keep]
        best_ids, best_sims = ids, sims
    order = np.lexsort((best_ids, -best_sims))
    top = [(int(best_ids[i]), float(best_sims[i])) for i in order]
    if not scanned:
        return Nearest(top=[], low=0.0, high=0.0, scanned=0, method="scan")
    return Nearest(top=top, low=float(low), high=float(high), scanned=scanned, method="scan")


def _index_signature(connection: Connection) -> tuple[Any, ...]:
    """Changes whenever a document is added or removed, or vectors are added (as
    ``_catalog._signature``: a replaced document gets a new, higher row id; ``add_vectors``
    raises the generation counter). Counting uses an index, never the vectors, and counts
    again only when the database changed (``_unchanged.py``)."""
    d, state = t.search_documents, t.search_state
    generation = select(state.c.value).where(state.c.name == GENERATION).scalar_subquery()
    return unless_changed(
        connection,
        "index signature",
        lambda: tuple(
            connection.execute(
                select(func.count(d.c.doc_type), func.max(d.c.row_id), generation)
            ).one()
        ),
    )


@dataclass(slots=True)
class _Scanned:
    """What a process knows of one scope of one store: the index's signature when it was
    last searched, how many vectors it held, and those vectors once they are kept."""

    engine: weakref.ref[Engine]
    signature: tuple[Any, ...]
    count: int
    row_ids: NDArray[np.int64] | None = None
    matrix: NDArray[np.float32] | None = None


class _HeldScopes:
    """The vectors of the scopes this process searched more than once, least recently
    searched first, at most ``HELD_VECTORS`` in all (``nearest``'s scan path).

    Keyed by the engine a search reads through (one per store object: a store opened again
    starts afresh), the model and the scope; an entry is used only while the index's
    signature is the one it was read under.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scopes: OrderedDict[tuple[int, str, Scope], _Scanned] = OrderedDict()
        self._held = 0

    def nearest(
        self,
        connection: Connection,
        query: NDArray[np.float32],
        model: str,
        scope: Scope,
        k: int,
        chunk: int,
    ) -> Nearest:
        engine = connection.engine
        key = (id(engine), model, scope)
        signature = _index_signature(connection)
        with self._lock:
            known = self._scopes.get(key)
            if known is not None and (known.engine() is not engine or known.signature != signature):
                self._forget(key)
                known = None
            if known is not None:
                self._scopes.move_to_end(key)
        if known is not None and known.matrix is not None and known.row_ids is not None:
            return _nearest_held(known.row_ids, known.matrix, query, k)
        if known is None or known.count > HELD_VECTORS:
            # A first search of this scope (or one too large to keep): the streaming scan.
            near = _nearest_scan(connection, query, model, scope, k, chunk)
            with self._lock:
                self._forget(key)
                self._scopes[key] = _Scanned(weakref.ref(engine), signature, near.scanned)
                self._evict()
            return near
        # Searched again, index unchanged: keep this scope's vectors from now on.
        row_ids, matrix = _read_scope(connection, model, scope)
        with self._lock:
            self._forget(key)
            self._scopes[key] = _Scanned(
                weakref.ref(engine), signature, len(row_ids), row_ids, matrix
            )
            self._held += len(row_ids)
            self._evict()
        return _nearest_held(row_ids, matrix, query, k)

    def _forget(self, key: tuple[int, str, Scope]) -> None:
        gone = self._scopes.pop(key, None)
        if gone is not None and gone.row_ids is not None:
            self._held -= len(gone.row_ids)

    def _evict(self) -> None:
        """Drop the scopes of stores no longer open, the least recently searched beyond
        ``SCOPES_KNOWN``, then the least recently searched kept scopes until at most
        ``HELD_VECTORS`` vectors are kept."""
        for key in [key for key, entry in self._scopes.items() if entry.engine() is None]:
            self._forget(key)
        for key in list(self._scopes)[: max(0, len(self._scopes) - SCOPES_KNOWN)]:
            self._forget(key)
        for key in [key for key, entry in self._scopes.items() if entry.row_ids is not None]:
            if self._held <= HELD_VECTORS:
                break
            self._forget(key)

    def clear(self) -> None:
        """Forget every scope (tests)."""
        with self._lock:
            self._scopes.clear()
            self._held = 0


_HELD = _HeldScopes()


def _read_scope(
    connection: Connection, model: str, scope: Scope
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Every vector of ``model`` in ``scope``: row ids and one matrix."""
    import numpy as np

    rows = connection.execute(_vector_rows(model, scope)).all()
    row_ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    blobs = b"".join(bytes(row[1]) for row in rows)
    matrix = np.frombuffer(blobs, dtype="<f4").reshape(len(rows), DIMENSIONS)
    return row_ids, matrix


def _nearest_held(
    row_ids: NDArray[np.int64], matrix: NDArray[np.float32], query: NDArray[np.float32], k: int
) -> Nearest:
    """``_nearest_scan``'s answer from vectors kept in memory."""
    import numpy as np

    if not len(row_ids):
        return Nearest(top=[], low=0.0, high=0.0, scanned=0, method="scan")
    products = matrix @ query
    low, high = float(products.min()), float(products.max())
    sims = products.astype(np.float32)
    if len(row_ids) > k:
        # The k best and every row tied with the k-th, then ranked as the scan ranks them.
        threshold = np.partition(sims, len(sims) - k)[len(sims) - k]
        chosen = np.flatnonzero(sims >= threshold)
    else:
        chosen = np.arange(len(row_ids))
    order = chosen[np.lexsort((row_ids[chosen], -sims[chosen]))][:k]
    return Nearest(
        top=[(int(row_ids[i]), float(sims[i])) for i in order],
        low=low,
        high=high,
        scanned=len(row_ids),
        method="scan",
    )


def _nearest_sql(
    connection: Connection, query: NDArray[np.float32], model: str, scope: Scope, k: int
) -> Nearest:
    filters, params = scope_filters(scope)
    params |= {"query": query.astype("<f4").tobytes(), "model": model, "k": k}
    # One pass: the similarities are computed once, then ranked and bounded.
    join = "JOIN search_documents AS d ON d.row_id = v.row_id " if _scoped(scope) else ""
    rows = connection.execute(
        text(
            "WITH s AS MATERIALIZED (SELECT v.row_id AS row_id, "
            "1 - vec_distance_cosine(v.vector, :query) AS sim "
            f"FROM search_vectors AS v {join}"
            f"WHERE v.model = :model {filters}) "
            "SELECT row_id, sim, (SELECT min(sim) FROM s), (SELECT max(sim) FROM s), "
            "(SELECT count(*) FROM s) FROM s ORDER BY sim DESC, row_id LIMIT :k"
        ),
        params,
    ).all()
    if not rows:
        return Nearest(top=[], low=0.0, high=0.0, scanned=0, method="sqlite-vec")
    return Nearest(
        top=[(int(row[0]), float(row[1])) for row in rows],
        low=float(rows[0][2]),
        high=float(rows[0][3]),
        scanned=int(rows[0][4]),
        method="sqlite-vec",
    )


def vectors_of(
    connection: Connection, row_ids: Sequence[int], model: str
) -> dict[int, NDArray[np.float32]]:
    """The stored vectors of ``model`` of these documents (those that have one)."""
    import numpy as np

    v = t.search_vectors
    found: dict[int, NDArray[np.float32]] = {}
    for part in chunks(sorted(set(row_ids)), IN_CLAUSE):
        for row in connection.execute(
            select(v.c.row_id, v.c.vector).where(
                and_(v.c.row_id.in_(list(part)), v.c.model == model)
            )
        ):
            found[int(row.row_id)] = np.frombuffer(bytes(row.vector), dtype="<f4")
    return found


# -- sqlite-vec ----------------------------------------------------------------------------

_registering = threading.Lock()
_registered: bool | None = None


def has_sqlite_vec(connection: Connection) -> bool:
    """Whether this connection can run sqlite-vec's functions (loading them if it can)."""
    if connection.dialect.name != "sqlite" or importlib.util.find_spec("sqlite_vec") is None:
        return False
    raw = connection.connection.driver_connection
    if raw is None:
        return False
    # Asking costs microseconds; a connection cannot carry a mark (no weak references).
    return _load(raw)


def _load(raw: Any) -> bool:
    import sqlite3

    import sqlite_vec  # type: ignore[import-untyped]

    if _answers(raw):
        return True
    if hasattr(raw, "enable_load_extension"):
        try:
            raw.enable_load_extension(True)
            try:
                sqlite_vec.load(raw)
            finally:
                raw.enable_load_extension(False)
        except sqlite3.Error:
            return False
        return _answers(raw)
    # Registered now, it reaches connections opened from here on, not this one.
    register_auto_extension()
    return False


def _answers(raw: Any) -> bool:
    import sqlite3

    try:
        raw.execute("SELECT vec_version()").fetchone()
    except sqlite3.Error:
        return False
    return True


def register_auto_extension() -> bool:
    """Have SQLite load sqlite-vec into every connection this process opens from now on
    (``sqlite3_auto_extension``), for a Python whose ``sqlite3`` cannot load extensions.

    True when registered; False when sqlite-vec or the shared SQLite library is missing (a
    Python with SQLite built in: connections then answer without sqlite-vec, by the scan).
    """
    global _registered
    with _registering:
        if _registered is not None:
            return _registered
        _registered = False
        spec = importlib.util.find_spec("sqlite_vec")
        if spec is None or spec.origin is None:
            return False
        # The package's loadable_path(), without importing the package: its __init__
        # imports numpy (a fifth of a second of every command's start).
        loadable = os.path.join(os.path.dirname(spec.origin), "vec0")

        name = ctypes.util.find_library("sqlite3")
        try:
            library = ctypes.CDLL(name or "libsqlite3.so.0")
            extension = ctypes.CDLL(os.path.normpath(loadable) + _suffix())
            entry = ctypes.cast(extension.sqlite3_vec_init, ctypes.c_void_p)
            _registered = library.sqlite3_auto_extension(entry) == 0
        except (OSError, AttributeError):
            return False
        return _registered


def _suffix() -> str:
    import sys

    return {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")


# Before any store of this process opens a connection (``proctor.search`` is imported
# before the store in every command that searches): those opened earlier scan instead.
register_auto_extension()
