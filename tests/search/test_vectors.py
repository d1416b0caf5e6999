"""Vectors are queried where they live: the same hits as scoring every document, bounded work.

The ranking from the database (``_rank_in_database``: the nearest documents by sqlite-vec
in SQL or by a streaming scan, the full-text matches and the turns around them) is held
equal to the ranking from the in-memory copy of the index (``_rank_hybrid``, itself held
equal to scoring every document: ``test_rank_candidates.py``), on both backends, over
many queries and scopes. The encoder here is a small deterministic stand-in (a unit vector
from the words of a text), so the store can hold enough documents to make the candidates
a small part of it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from proctor.search import embed_pending, index_full_text, search
from proctor.search._catalog import hold_vectors, load_catalog
from proctor.search._encoder import DIMENSIONS
from proctor.search._query import _full_text, _rank_hybrid, _rank_in_database, query_terms
from proctor.search._vectors import Scope, has_sqlite_vec, nearest
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write

if TYPE_CHECKING:
    from numpy.typing import NDArray

WORDS = [
    "garden",
    "paint",
    "lake",
    "camping",
    "adoption",
    "family",
    "sunrise",
    "mountains",
    "support",
    "group",
    "kids",
    "kitchen",
    "recipe",
    "bread",
    "oven",
    "guitar",
    "concert",
    "music",
    "piano",
    "violin",
    "train",
    "station",
    "ticket",
    "travel",
    "beach",
    "ocean",
    "surf",
    "school",
    "teacher",
    "exam",
    "homework",
    "library",
    "novel",
    "poem",
    "letter",
]


class WordEncoder:
    """Unit vectors from the words of a text: each word a fixed random direction."""

    name = "test-words"

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> NDArray[np.float32]:
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for index, text in enumerate(texts):
            for word in query_terms(text) or ["empty"]:
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
                rows[index] += np.random.default_rng(seed).standard_normal(DIMENSIONS)
            rows[index] /= np.linalg.norm(rows[index])
        return rows


def _fill(store: SqlStore, conversations: int = 12, turns: int = 50) -> None:
    rng = random.Random(5)
    for number in range(conversations):
        lines = [
            (rng.choice(["Ann", "Bo", "Cy"]), " ".join(rng.choices(WORDS, k=rng.randint(3, 12))))
            for _ in range(turns)
        ]
        write(store, dialogue(f"c{number}", lines, project=f"p{number % 3}"))
    index_full_text(store)
    embed_pending(store, WordEncoder())


def _brute(store: SqlStore, query: str, scope: Scope, limit: int) -> list[tuple[int, float]]:
    encoder = WordEncoder()
    catalog = load_catalog(store, encoder)  # type: ignore[arg-type]
    terms = query_terms(query)
    with store._read() as connection:
        matches = _full_text(connection, terms, scope) if terms else []
    ranked, _ = _rank_hybrid(catalog, encoder, query, matches, terms, scope, limit)  # type: ignore[arg-type]
    return ranked


def _from_database(
    store: SqlStore, query: str, scope: Scope, limit: int, *, k: int, extension: bool
) -> list[tuple[int, float]]:
    encoder = WordEncoder()
    terms = query_terms(query)
    with store._read() as connection:
        matches = _full_text(connection, terms, scope) if terms else []
        ranked, _, _ = _rank_in_database(
            connection,
            encoder.name,
            encoder.encode([query])[0],
            matches,
            terms,
            scope,
            limit,
            semantic_candidates=k,
            allow_extension=extension,
        )
    return ranked


def _scopes(store: SqlStore) -> list[Scope]:
    with store._read() as connection:
        project = connection.execute(
            __import__("sqlalchemy").text("SELECT project_id FROM projects ORDER BY name LIMIT 1")
        ).scalar_one()
    return [
        Scope(None, None, None),
        Scope(project, None, None),
        Scope(None, "c3", None),
        Scope(None, None, ("message",)),
    ]


@pytest.mark.parametrize("extension", [True, False], ids=["sqlite-vec-if-any", "scan"])
@pytest.mark.slow
def test_ranking_from_the_database_equals_scoring_every_document(
    store: SqlStore, extension: bool, backend_url: str | Path
) -> None:
    if extension and not isinstance(backend_url, Path):
        # has_sqlite_vec is False on any other database: the same code as "scan" there.
        pytest.skip("sqlite-vec is SQLite's: on PostgreSQL this is the scan")
    _fill(store)
    rng = random.Random(9)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(25)]
    queries += ["What did Ann paint by the lake?", "Bo", "zebra xylophone"]
    for scope in _scopes(store):
        for query in queries:
            brute = _brute(store, query, scope, 10)
            found = _from_database(store, query, scope, 10, k=64, extension=extension)
            assert [row_id for row_id, _ in found] == [row_id for row_id, _ in brute], (
                query,
                scope,
            )
            assert [s for _, s in found] == pytest.approx([s for _, s in brute], abs=1e-5)


def test_nearest_documents_equal_a_brute_force_top_k(store: SqlStore) -> None:
    _fill(store, conversations=4)
    encoder = WordEncoder()
    catalog = load_catalog(store, encoder)  # type: ignore[arg-type]
    for query in ("lake sunrise", "piano concert ticket", "homework"):
        vector = encoder.encode([query])[0]
        similarities = catalog.vectors @ vector
        order = np.lexsort((catalog.row_ids, -similarities))[:20]
        with store._read() as connection:
            for extension in (True, False):
                near = nearest(
                    connection,
                    vector,
                    encoder.name,
                    Scope(None, None, None),
                    20,
                    allow_extension=extension,
                )
                assert [row_id for row_id, _ in near.top] == [
                    int(catalog.row_ids[i]) for i in order
                ]
                assert near.low == pytest.approx(float(similarities.min()), abs=1e-5)
                assert near.high == pytest.approx(float(similarities.max()), abs=1e-5)
                assert near.scanned == len(catalog.row_ids)


@pytest.mark.slow
def test_the_scan_holds_one_chunk_of_vectors_not_all_of_them(store: SqlStore) -> None:
    _fill(store, conversations=20, turns=100)
    encoder = WordEncoder()
    vector = encoder.encode(["lake"])[0]
    every_vector = 2_000 * DIMENSIONS * 4  # 3 MB
    with store._read() as connection:
        tracemalloc.start()
        try:
            near = nearest(
                connection,
                vector,
                encoder.name,
                Scope(None, None, None),
                10,
                chunk=100,
                allow_extension=False,
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert near.scanned == 2_000
    assert near.method == "scan"
    assert len(near.top) == 10
    assert peak < every_vector / 4, f"peak {peak:,} bytes for {every_vector:,} of vectors"


def test_a_scope_searched_again_is_kept_until_the_index_changes(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's second search of a scope keeps its vectors (PostgreSQL's path: an
    evaluation asks hundreds of questions of one conversation); the answers stay the
    scan's, and vectors added or a document removed read the scope again."""
    from proctor.search import _vectors

    _fill(store, conversations=4)
    encoder = WordEncoder()
    scope = Scope(None, "c1", ("message",))
    reads: list[Scope] = []
    real_read = _vectors._read_scope
    monkeypatch.setattr(
        _vectors,
        "_read_scope",
        lambda connection, model, chosen: (
            reads.append(chosen) or real_read(connection, model, chosen)
        ),
    )

    def near(query: str) -> _vectors.Nearest:
        with store._read() as connection:
            return nearest(
                connection,
                encoder.encode([query])[0],
                encoder.name,
                scope,
                7,
                allow_extension=False,
            )

    def scanned(query: str) -> _vectors.Nearest:
        with store._read() as connection:
            return _vectors._nearest_scan(
                connection, encoder.encode([query])[0], encoder.name, scope, 7, 64
            )

    queries = ["lake sunrise", "piano concert ticket", "homework", "zebra", "lake sunrise"]
    for number, query in enumerate(queries):
        held, fresh = near(query), scanned(query)
        assert held.top == [(row_id, pytest.approx(sim, abs=1e-6)) for row_id, sim in fresh.top]
        assert (held.low, held.high) == pytest.approx((fresh.low, fresh.high), abs=1e-6)
        assert held.scanned == fresh.scanned == 50
        assert len(reads) == (0 if number == 0 else 1), number  # read once, on the second
    # A document replaced (a new row id) and its vector added: read again, once.
    write(store, dialogue("c1", [("Ann", "lake lake lake")], project="p1"))
    index_full_text(store)
    embed_pending(store, WordEncoder())
    near("lake")
    assert len(reads) == 1  # the first search after a change scans, as a new scope does
    held, fresh = near("lake"), scanned("lake")
    assert len(reads) == 2
    assert held.scanned == fresh.scanned == 50
    assert (
        held.top[0]
        == fresh.top[0]
        == (max(row_id for row_id, _ in held.top), pytest.approx(held.top[0][1]))
    )
    assert held.top == [(row_id, pytest.approx(sim, abs=1e-6)) for row_id, sim in fresh.top]


@pytest.mark.skipif(importlib.util.find_spec("sqlite_vec") is None, reason="no sqlite-vec")
def test_on_sqlite_the_similarities_are_computed_in_sql_by_sqlite_vec(
    sqlite_store: SqlStore,
) -> None:
    _fill(sqlite_store, conversations=2)
    encoder = WordEncoder()
    with sqlite_store._read() as connection:
        assert has_sqlite_vec(connection)
        near = nearest(
            connection, encoder.encode(["lake"])[0], encoder.name, Scope(None, None, None), 5
        )
    assert near.method == "sqlite-vec"
    assert len(near.top) == 5
    assert near.scanned == 100


def test_a_search_reads_no_copy_of_the_index_unless_the_process_holds_one(
    store: SqlStore,
) -> None:
    from proctor.search._catalog import _catalogs

    _fill(store, conversations=3)
    _catalogs.pop(store, None)
    result = search(store, "lake sunrise", encoder=WordEncoder())  # type: ignore[arg-type]
    assert result.mode == "hybrid"
    assert result.hits
    assert result.index.embedded == result.index.documents == 150
    assert store not in _catalogs
    hold_vectors(store)
    held = search(store, "lake sunrise", encoder=WordEncoder())  # type: ignore[arg-type]
    assert store in _catalogs
    assert [h.doc_id for h in held.hits] == [h.doc_id for h in result.hits]
