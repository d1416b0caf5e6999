"""Vectors queried where they live: the nearest documents to a query, in the database.

A search needs, of the vectors in scope, the ``k`` most similar to the query and the
lowest and highest similarity (hybrid ranking min-max normalises over the scope). Nothing
else is read: no copy of the index is kept, and memory stays at one chunk of vectors.

- SQLite with ``sqlite-vec`` (the ``embeddings`` extra): the similarity is computed in SQL
  by ``vec_distance_cosine`` over the stored float32 blobs (they are sqlite-vec's own
  format), filtered by project, conversation and type in the same statement; only ``k``
  rows come back. The extension is loaded into each connection with
  ``enable_load_extension`` where Python's ``sqlite3`` allows it, else registered once per
  process with SQLite's ``sqlite3_auto_extension`` (CPython builds without loadable
  extensions, like pyenv's default, still link the system's SQLite).
- Otherwise (no sqlite-vec; PostgreSQL, whose stored vectors are ``bytea``): a streaming
  scan in chunks of ``SCAN_CHUNK`` rows, each multiplied in numpy and dropped, keeping a
  running top ``k`` and the extremes.

``vectors_of`` reads the vectors of a few documents by row id (the candidates' neighbours).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, and_, select, text
from sqlalchemy.engine import Connection

from proctor.search._encoder import DIMENSIONS
from proctor.search._write import IN_CLAUSE, chunks
from proctor.store import tables as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

SCAN_CHUNK = 2_048
"""Vectors held at once by the streaming scan (3 MB)."""


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
    return _nearest_scan(connection, query, model, scope, k, chunk)


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


def _nearest_sql(
    connection: Connection, query: NDArray[np.float32], model: str, scope: Scope, k: int
) -> Nearest:
    filters, params = [], {"query": query.astype("<f4").tobytes(), "model": model, "k": k}
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
    # One pass: the similarities are computed once, then ranked and bounded.
    join = "JOIN search_documents AS d ON d.row_id = v.row_id " if _scoped(scope) else ""
    rows = connection.execute(
        text(
            "WITH s AS MATERIALIZED (SELECT v.row_id AS row_id, "
            "1 - vec_distance_cosine(v.vector, :query) AS sim "
            f"FROM search_vectors AS v {join}"
            f"WHERE v.model = :model {' '.join(filters)}) "
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
