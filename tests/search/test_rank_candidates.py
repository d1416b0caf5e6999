"""A held index ranks by scoring only the documents that can score above 0 (``_rank_hybrid``):
the full-text matches, the documents whose similarity it computes, the turns beside them
and the named authors' documents. Held equal here to scoring every document of the
catalog (the formula of ``_query.py`` over whole arrays, ties by row id), exactly and from
sign codes, in every scope, with documents not embedded yet and documents that ask, and
when fewer documents than asked for score above 0 (the rest come by row id)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from proctor.search import _binary as binary_module
from proctor.search import _fts5_top, embed_pending, index_full_text
from proctor.search import _query as query_module
from proctor.search._asking import ASKING_SHARE
from proctor.search._binary import (
    EXACT_BELOW,
    EXTREMES,
    RESCORED,
    codes_of,
    extremes,
    hamming,
    held_codes,
)
from proctor.search._catalog import Catalog, load_catalog
from proctor.search._query import (
    AUTHOR_WEIGHT,
    FULL_TEXT_WEIGHT,
    NEIGHBOUR_WEIGHT,
    _full_text,
    _names,
    _rank_hybrid,
    _semantic,
    query_terms,
)
from proctor.search._vectors import Scope
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write
from tests.search.test_vectors import WORDS, WordEncoder


def _every_document(
    catalog: Catalog,
    query: str,
    matches: Any,
    scope: Scope,
    limit: int,
    exact_below: int,
    near: int,
    far: int,
) -> list[tuple[int, float]]:
    """Every document of the catalog scored, best first (ties by row id): the ranking
    ``_rank_hybrid`` must give. Similarities as it computes them (the same products, so
    the same bits): of every usable document, or of the sign codes' candidates."""
    count = len(catalog.row_ids)
    in_scope = catalog.in_scope(scope)
    lexical = np.zeros(count, dtype=np.float32)
    for match in matches:
        lexical[catalog.index_of[match.row_id]] = match.score
    best = lexical[in_scope].max()
    if best > 0:
        lexical /= best
    vector = WordEncoder().encode([query])[0]
    usable = in_scope & catalog.has_vector
    if usable.sum() >= exact_below:
        words = held_codes(catalog.row_ids, catalog.vectors, catalog.has_vector)
        nearest, farthest = extremes(hamming(words, codes_of(vector)), usable, near, far)
        matched = np.flatnonzero(lexical)
        around = np.concatenate([nearest, matched])
        beside = [catalog.before[around], catalog.after[around]]
        wanted = np.concatenate([nearest, farthest, matched, *beside])
        exact = np.zeros(count, dtype=bool)
        exact[wanted[wanted >= 0]] = True
        exact &= catalog.has_vector
        chosen = np.flatnonzero(exact)
        found = catalog.vectors[chosen] @ vector
        similarity = np.full(count, found[usable[chosen]].min(), dtype=np.float32)
        similarity[chosen] = found
    else:
        similarity = np.zeros(count, dtype=np.float32)
        similarity[usable] = catalog.vectors[usable] @ vector
    semantic = np.zeros(count, dtype=np.float32)
    low, high = (similarity[usable].min(), similarity[usable].max()) if usable.any() else (0, 0)
    if high > low:
        semantic = np.where(usable, (similarity - low) / (high - low), 0.0).astype(np.float32)
    fused = np.where(
        catalog.has_vector, FULL_TEXT_WEIGHT * lexical + (1 - FULL_TEXT_WEIGHT) * semantic, lexical
    )
    fused[~in_scope] = 0.0
    before = np.where(catalog.before >= 0, fused[np.maximum(catalog.before, 0)], 0.0)
    after = np.where(catalog.after >= 0, fused[np.maximum(catalog.after, 0)], 0.0)
    own = np.where(catalog.rows.asks, fused * ASKING_SHARE, fused)
    score = own + NEIGHBOUR_WEIGHT * np.maximum(before, after)
    for author, rows in catalog.by_author.items():
        if _names(author) & set(query_terms(query)):
            score[rows] += AUTHOR_WEIGHT
    order = [i for i in np.lexsort((catalog.row_ids, -score)) if in_scope[i]][:limit]
    return [(int(catalog.row_ids[i]), float(score[i])) for i in order]


@pytest.fixture
def held(sqlite_store: SqlStore) -> SqlStore:
    """Nine conversations of 40 turns, some asking, all embedded, and a tenth stored since
    (full text only: not embedded yet)."""
    pick = random.Random(23)

    def turns(count: int) -> list[tuple[str, str]]:
        return [
            (
                pick.choice(["Ann", "Bo", "Cy"]),
                " ".join(pick.choices(WORDS, k=pick.randint(2, 9)))
                + pick.choice(["", "", "?", " ?  "]),
            )
            for _ in range(count)
        ]

    for number in range(9):
        write(sqlite_store, dialogue(f"c{number}", turns(40), project=f"p{number % 3}"))
    index_full_text(sqlite_store)
    embed_pending(sqlite_store, WordEncoder())
    write(sqlite_store, dialogue("late", turns(40), project="p0"))
    index_full_text(sqlite_store)
    return sqlite_store


def _scopes(store: SqlStore) -> list[Scope]:
    with store.repos.search.read() as connection:
        project = connection.exec_driver_sql(
            "SELECT project_id FROM projects WHERE name = 'p0'"
        ).scalar_one()
    return [
        Scope(None, None, None),
        Scope(project, None, None),
        Scope(None, "late", None),
        Scope(None, "c4", None),
        Scope(None, None, ("message",)),
    ]


@pytest.mark.parametrize(
    ("exact_below", "rescored", "matched", "limit", "early"),
    [
        (None, None, None, 10, False),
        (1, 6, None, 10, False),
        (1, 6, None, 60, False),
        (1, 6, 3, 10, False),
        (None, None, None, 10, True),
        (1, 6, None, 60, True),
        (1, 40, None, 10, True),
    ],
    ids=[
        "exact",
        "codes",
        "codes-more-than-score",
        "codes-authors-beyond-the-matches",
        "exact-made-early",
        "codes-made-early",
        "codes-made-early-in-small-blocks",
    ],
)
def test_scoring_the_candidates_ranks_as_scoring_every_document(
    held: SqlStore,
    monkeypatch: pytest.MonkeyPatch,
    exact_below: int | None,
    rescored: int | None,
    matched: int | None,
    limit: int,
    early: bool,
) -> None:
    """``early``: with the part made while the full text ranks (``_semantic``), the
    similarities it computed reused (``completed_similarities``); in small blocks (64
    vectors), many of them are, and the last block is computed again."""
    if rescored is not None:  # few candidates: most documents are scored 0
        monkeypatch.setattr(query_module, "RESCORED", rescored)
        monkeypatch.setattr(query_module, "EXTREMES", 3)
    if rescored == 40:
        monkeypatch.setattr(binary_module, "GATHERED", 64)
    if matched is not None:  # a named author's turns beyond the full-text matches
        monkeypatch.setattr(query_module, "CANDIDATES", matched)
    reused: list[int] = []  # similarities taken from the early part, per ranking

    def completed(vectors: Any, rows: Any, vector: Any, known_rows: Any, known: Any) -> Any:
        last = len(rows) - binary_module.GATHERED  # at least the last block is computed again
        reused.append(int(np.isin(rows[: max(last, 0)], known_rows).sum()))
        return binary_module.completed_similarities(vectors, rows, vector, known_rows, known)

    monkeypatch.setattr(query_module, "completed_similarities", completed)
    encoder = WordEncoder()
    catalog = load_catalog(held, encoder)
    assert not catalog.has_vector.all() and catalog.rows.asks.any()
    rng = random.Random(4)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(12)]
    queries += ["What did Ann paint by the lake?", "Bo", "zebra xylophone", "Cy Ann"]
    filled = 0
    for scope in _scopes(held):
        for query in queries:
            terms = query_terms(query)
            with held.repos.search.read() as connection:
                matches = _full_text(connection, terms, scope, catalog)
            prepared = (
                _semantic(catalog, encoder, query, scope, exact_below, early=True)
                if early
                else None
            )
            ranked, similarity = _rank_hybrid(
                catalog,
                encoder,
                query,
                matches,
                terms,
                scope,
                limit,
                exact_below=exact_below,
                prepared=prepared,
            )
            expected = _every_document(
                catalog,
                query,
                matches,
                scope,
                limit,
                exact_below or EXACT_BELOW,
                rescored or RESCORED,
                3 if rescored else EXTREMES,
            )
            assert ranked == expected, (query, scope)
            assert set(similarity) == {row_id for row_id, _ in ranked}
            filled += sum(1 for _, score in ranked if score == 0)
    if limit > 10:
        assert filled  # some lists were completed with documents scoring 0
    if early and exact_below is not None:
        assert reused and (rescored != 40 or sum(reused) > 0)


@pytest.mark.parametrize("by_sets", [False, True], ids=["one-statement", "sets-of-words"])
def test_matches_are_placed_from_the_held_copy_or_else_from_the_index(
    held: SqlStore, monkeypatch: pytest.MonkeyPatch, by_sets: bool
) -> None:
    catalog = load_catalog(held, WordEncoder())
    write(held, dialogue("later", [("Dee", "lake garden ?"), ("Ann", "lake paint")]))
    index_full_text(held)  # stored since the copy was made: placed from the index
    whole = Scope(None, None, None)
    for query in ["lake", "garden paint", "Ann lake family", "Dee"]:
        with held.repos.search.read() as connection:
            joined = _full_text(connection, query_terms(query), whole)  # one statement
            if by_sets:  # ranked by sets of words, placed by the copy or a second statement
                monkeypatch.setattr(_fts5_top, "EXHAUSTIVE_BELOW", 0)
            from_copy = _full_text(connection, query_terms(query), whole, catalog)
            from_index = _full_text(connection, query_terms(query), whole)
            monkeypatch.undo()
        assert from_copy == from_index, query
        assert sorted(from_copy, key=str) == sorted(joined, key=str), query
        assert any(m.row_id not in catalog.index_of for m in from_copy), query
        assert any(m.asks for m in from_copy)


@pytest.mark.parametrize("exact_below", [None, 1], ids=["exact", "codes"])
def test_a_search_ranks_the_same_with_its_vector_part_made_meanwhile_late_or_inline(
    held: SqlStore, monkeypatch: pytest.MonkeyPatch, exact_below: int | None
) -> None:
    """The held ranking's part without the full-text matches runs on a helper thread while
    they are ranked (``_start_semantic``); not started (an author named), or not begun
    before the matches were (every helper busy: cancelled), it is made after them. The
    same hits and scores every way."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Event

    from proctor.search import hold_vectors, search

    if exact_below is not None:
        monkeypatch.setattr(query_module, "EXACT_BELOW", exact_below)
        monkeypatch.setattr(query_module, "RESCORED", 6)
        monkeypatch.setattr(query_module, "EXTREMES", 3)
    hold_vectors(held)
    monkeypatch.setattr(query_module, "_spare_core", lambda: True)  # however busy the machine
    encoder = WordEncoder()
    used: list[bool] = []
    original = query_module._semantic_of

    def seen(started: Any, sentence: str) -> Any:
        made = original(started, sentence)
        used.append(made is not None)
        return made

    monkeypatch.setattr(query_module, "_semantic_of", seen)
    # The full text waits until a started part has begun on its helper (a small store's
    # full text is quicker than a helper thread taking the part up).
    began, started, waiting = Event(), [False], [True]
    early, start, full_text = (
        query_module._early_semantic,
        query_module._start_semantic,
        query_module._full_text,
    )

    def early_begun(*args: Any) -> Any:
        began.set()
        return early(*args)

    def start_seen(*args: Any) -> Any:
        began.clear()
        made = start(*args)
        started[0] = made is not None
        return made

    def full_text_after(*args: Any) -> Any:
        if started[0] and waiting[0]:
            assert began.wait(30)
        return full_text(*args)

    monkeypatch.setattr(query_module, "_early_semantic", early_begun)
    monkeypatch.setattr(query_module, "_start_semantic", start_seen)
    monkeypatch.setattr(query_module, "_full_text", full_text_after)

    def hits(query: str) -> list[tuple[str, float, float | None]]:
        found = search(held, query, encoder=encoder)
        return [(hit.doc_id, hit.score, hit.similarity) for hit in found.hits]

    queries = ["lake garden paint", "sunrise", "What did Ann paint by the lake?", "zebra"]
    meanwhile = [hits(query) for query in queries]
    assert used == [True, True, False, True]  # "Ann": the sentence waits for the matches
    waiting[0] = False  # from here on no part is begun before the matches
    with monkeypatch.context() as inline:
        inline.setattr(query_module, "_start_semantic", lambda *args: None)
        assert [hits(query) for query in queries] == meanwhile
    busy, release = ThreadPoolExecutor(1), Event()
    busy.submit(release.wait)  # the only helper busy: the part is cancelled, made inline
    monkeypatch.setattr(query_module, "_helpers", busy)
    used.clear()
    try:
        assert [hits(query) for query in queries] == meanwhile
    finally:
        release.set()
        busy.shutdown()
    assert used == [False] * len(queries)


def test_a_search_on_a_busy_machine_makes_its_vector_part_itself(
    held: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper thread only shortens a search where it has a core of its own."""
    from proctor.search import hold_vectors, search

    hold_vectors(held)
    started: list[object] = []
    start = query_module._start_semantic

    def seen(*args: Any) -> Any:
        made = start(*args)
        started.append(made)
        return made

    monkeypatch.setattr(query_module, "_start_semantic", seen)
    monkeypatch.setattr(query_module, "spare_core", lambda: False)
    busy = search(held, "lake garden", encoder=WordEncoder())  # type: ignore[arg-type]
    monkeypatch.setattr(query_module, "spare_core", lambda: True)
    idle = search(held, "lake garden", encoder=WordEncoder())  # type: ignore[arg-type]
    assert started[0] is None and started[1] is not None
    assert [(h.doc_id, h.score) for h in busy.hits] == [(h.doc_id, h.score) for h in idle.hits]
