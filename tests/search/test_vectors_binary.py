"""Large scopes rank from sign codes and exact rescoring (``_binary.py``), small ones exactly.

The approximate path is forced on a small store by lowering the threshold (``exact_below``).
Where the candidates cover every document the ranking must equal the exact one; with few
candidates most of the exact top 10 must still be found.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from proctor.search import _query as query_module
from proctor.search import search
from proctor.search._binary import (
    GATHERED,
    codes_of,
    completed_similarities,
    extremes,
    hamming,
    held_codes,
    similarities,
    whole_similarities,
    words_of,
)
from proctor.search._catalog import hold_vectors, load_catalog
from proctor.search._one_thread import blas_on_one_thread
from proctor.search._query import _full_text, _rank_hybrid, query_terms
from proctor.store import SqlStore
from tests.search.test_vectors import WORDS, WordEncoder, _fill, _scopes


def test_hamming_distance_counts_the_differing_signs() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    expected = ((vectors > 0) != (query > 0)).sum(axis=1)
    codes = codes_of(vectors)
    assert codes.shape == (50, 48)
    assert hamming(words_of(codes), codes_of(query)).tolist() == expected.tolist()


@pytest.mark.parametrize(
    "count",
    [1, 7, GATHERED, GATHERED + 1, GATHERED + 2, 2 * GATHERED + 1, 3 * GATHERED + 5, 13_040],
)
def test_similarities_gathered_in_blocks_are_those_of_one_product(count: int) -> None:
    # Last blocks of one row, two, five and a whole block; the bench's largest set.
    rng = np.random.default_rng(count)
    vectors = rng.standard_normal((20_000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    rows = np.sort(rng.choice(len(vectors), count, replace=False))
    pytest.importorskip("threadpoolctl")  # BLAS on one thread, as the ranking runs it
    with blas_on_one_thread():
        found = similarities(vectors, rows, query)
        whole = vectors[rows] @ query
    assert found.dtype == np.float32
    assert found.tobytes() == whole.tobytes()  # bit for bit


@pytest.mark.parametrize(
    ("count", "known"),
    [
        (7, 100),
        (GATHERED + 1, 3_000),
        (GATHERED + 2, 3_000),
        (2 * GATHERED + 1, 0),
        (2 * GATHERED + 1, 5_000),
        (3 * GATHERED + 5, 500),
        (13_040, 9_000),
        (13_040, 20_000),
    ],
)
def test_similarities_completed_from_known_ones_are_those_of_one_product(
    count: int, known: int
) -> None:
    # Some rows known beforehand (their whole values), in and beyond the last block, the
    # others computed: bit for bit the floats of ``similarities``, hence of one product.
    rng = np.random.default_rng(count + known)
    vectors = rng.standard_normal((20_000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    rows = np.sort(rng.choice(len(vectors), count, replace=False))
    known_rows = np.sort(rng.choice(len(vectors), known, replace=False))
    pytest.importorskip("threadpoolctl")
    with blas_on_one_thread():
        before = whole_similarities(vectors, known_rows, query)
        found = completed_similarities(vectors, rows, query, known_rows, before)
        whole = vectors[rows] @ query
    assert found.tobytes() == whole.tobytes()


def test_blas_stays_on_one_thread_until_the_last_overlapping_block_ends() -> None:
    controller = pytest.importorskip("threadpoolctl").ThreadpoolController()

    def threads() -> list[int]:
        return [lib["num_threads"] for lib in controller.select(user_api="blas").info()]

    outside = threads()
    first, second = blas_on_one_thread(), blas_on_one_thread()
    first.__enter__()
    second.__enter__()  # another thread's block, begun inside the first
    first.__exit__(None, None, None)
    assert set(threads()) <= {1}  # the second block still runs on one thread
    second.__exit__(None, None, None)
    assert threads() == outside


@pytest.mark.parametrize("claimed_by", ["a block", "threadpoolctl"])
def test_blas_is_on_one_thread_in_a_block_of_any_thread(claimed_by: str) -> None:
    # threadpoolctl 3.8's OpenBLAS set_num_threads acts only in the first thread that called
    # it while that thread lives: a search's helper thread (alive as long as the process)
    # that limited BLAS first left every other thread's blocks on all the cores.
    threadpoolctl = pytest.importorskip("threadpoolctl")
    controller = threadpoolctl.ThreadpoolController()
    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    if hasattr(openblas, "clear_controlling_thread"):
        openblas.clear_controlling_thread(force=True)  # as in a new process

    def threads() -> list[int]:
        return [lib["num_threads"] for lib in controller.select(user_api="blas").info()]

    outside = threads()
    limited, release = threading.Event(), threading.Event()

    def helper() -> None:  # stays alive, as a search's helper thread or a server's worker does
        if claimed_by == "a block":
            with blas_on_one_thread():
                pass
        else:
            for library in controller.select(user_api="blas").lib_controllers:
                library.set_num_threads(library.num_threads)  # claims the count, unchanged
        limited.set()
        release.wait(30)

    other = threading.Thread(target=helper)
    other.start()
    try:
        assert limited.wait(30)
        with blas_on_one_thread():
            assert set(threads()) <= {1}
        assert threads() == outside
    finally:
        release.set()
        other.join()
        if hasattr(openblas, "clear_controlling_thread"):
            openblas.clear_controlling_thread(force=True)


def test_extremes_take_every_tie_and_only_usable_documents() -> None:
    distances = np.array([5, 1, 1, 9, 3, 9, 1, 7], dtype=np.uint16)
    near, far = extremes(distances, None, near=2, far=1)
    assert near.tolist() == [1, 2, 6]  # three tied at the nearest distance
    assert far.tolist() == [3, 5]
    usable = np.array([True, False, True, False, True, True, True, True])
    near, far = extremes(distances, usable, near=3, far=2)
    assert near.tolist() == [2, 4, 6]
    assert far.tolist() == [5, 7]


@pytest.mark.parametrize("share", [1.0, 0.7])
def test_extremes_are_every_document_as_near_or_as_far_as_the_nth(share: float) -> None:
    rng = np.random.default_rng(4)
    distances = rng.integers(0, 385, 5_000).astype(np.uint16)
    usable = rng.random(len(distances)) < share  # every document usable: the usual case
    ranked = np.sort(distances[usable])
    for near, far in [(1, 1), (100, 30), (4_096, 1_024), (6_000, 6_000)]:
        nearest, farthest = extremes(distances, usable, near, far)
        closest = ranked[min(near, len(ranked)) - 1]
        distant = ranked[::-1][min(far, len(ranked)) - 1]
        assert nearest.tolist() == np.flatnonzero(usable & (distances <= closest)).tolist()
        assert farthest.tolist() == np.flatnonzero(usable & (distances >= distant)).tolist()


def test_held_codes_follow_vectors_added_to_the_same_documents() -> None:
    rng = np.random.default_rng(4)
    row_ids = np.arange(20, dtype=np.int64)
    vectors = rng.standard_normal((20, 384)).astype(np.float32)
    has_vector = np.ones(20, dtype=bool)
    vectors[5:8], has_vector[5:8] = 0.0, False
    first = held_codes(row_ids, vectors, has_vector)
    assert np.array_equal(first, words_of(codes_of(vectors)))
    assert held_codes(row_ids, vectors, has_vector) is first  # kept
    added, gained = vectors.copy(), has_vector.copy()
    added[5:8], gained[5:8] = rng.standard_normal((3, 384)).astype(np.float32), True
    assert np.array_equal(held_codes(row_ids, added, gained), words_of(codes_of(added)))


def _ranked(
    store: SqlStore, query: str, scope: object, exact_below: int | None, *, words: bool = True
) -> list[tuple[int, float]]:
    """The top 10 of ``_rank_hybrid``; by the vectors alone unless ``words``."""
    encoder = WordEncoder()
    catalog = load_catalog(store, encoder)  # type: ignore[arg-type]
    terms = query_terms(query) if words else []
    with store._read() as connection:
        matches = _full_text(connection, terms, scope) if terms else []  # type: ignore[arg-type]
    ranked, _ = _rank_hybrid(
        catalog,
        encoder,  # type: ignore[arg-type]
        query,
        matches,
        terms,
        scope,  # type: ignore[arg-type]
        10,
        exact_below=exact_below,
    )
    return ranked


def _queries() -> list[str]:
    rng = random.Random(11)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(25)]
    return [*queries, "What did Ann paint by the lake?", "Bo", "zebra xylophone"]


@pytest.mark.slow
def test_the_approximate_path_equals_the_exact_one_when_its_candidates_cover_the_scope(
    store: SqlStore,
) -> None:
    _fill(store)  # 600 documents: fewer than the nearest codes rescored
    for scope in _scopes(store):
        for query in _queries():
            exact = _ranked(store, query, scope, None)
            approximate = _ranked(store, query, scope, 1)
            assert [r for r, _ in approximate] == [r for r, _ in exact], (query, scope)
            assert [s for _, s in approximate] == pytest.approx([s for _, s in exact], abs=1e-5)


def test_few_candidates_still_find_most_of_the_exact_top_ten_by_vectors_alone(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store)
    monkeypatch.setattr(query_module, "RESCORED", 96)
    monkeypatch.setattr(query_module, "EXTREMES", 48)
    found = total = 0
    for scope in _scopes(store)[:2]:
        for query in _queries():
            exact = [r for r, _ in _ranked(store, query, scope, None, words=False)]
            approximate = [r for r, _ in _ranked(store, query, scope, 1, words=False)]
            found += len(set(exact) & set(approximate))
            total += len(exact)
    assert found / total >= 0.9


def test_a_held_store_searches_a_large_scope_by_codes(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store, conversations=4)
    hold_vectors(store)
    exact = search(store, "lake sunrise", encoder=WordEncoder())  # type: ignore[arg-type]
    calls: list[int] = []
    original = query_module._approximate_similarity

    def counted(*args: object) -> object:
        calls.append(1)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(query_module, "EXACT_BELOW", 100)
    monkeypatch.setattr(query_module, "_approximate_similarity", counted)
    approximate = search(store, "lake sunrise", encoder=WordEncoder())  # type: ignore[arg-type]
    assert calls == [1]
    assert [h.doc_id for h in approximate.hits] == [h.doc_id for h in exact.hits]
    assert [h.similarity for h in approximate.hits] == pytest.approx(
        [h.similarity for h in exact.hits], abs=1e-5
    )
