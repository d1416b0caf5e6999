"""A large held search ranks its full text in two halves by row id, the upper one on a
helper thread with a connection of its own (``_query._halves``): the same matches with
the same scores, in the same order (ties by row id), as one statement, however the
words are ranked (one statement or by sets of words), and when the helper's half cannot
be used (its connection saw another version of the index, or no helper was free)."""

from __future__ import annotations

import itertools
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from proctor.search import _fts5_top, index_full_text
from proctor.search import _query as query_module
from proctor.search._catalog import Catalog, load_catalog
from proctor.search._query import _full_text, _Match
from proctor.search._vectors import Scope
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write
from tests.search.test_vectors import WordEncoder

# Zipf-like: the first words are in most documents, the last in a few.
VOCABULARY = [f"w{n:02d}x" for n in range(16)]
WEIGHTS = [1 / (n + 1) for n in range(16)]
WHOLE = Scope(None, None, None)
WAIT_FOR_HELPER = True
"""The caller's first half waits until the helper has begun its own (``halves_used``)."""
helper_began = threading.Event()


@pytest.fixture
def corpus(sqlite_store: SqlStore) -> SqlStore:
    """600 turns of 1–20 words drawn by frequency, and 60 turns repeated word for word (the
    same score: ties at the cut)."""
    pick = random.Random(85)
    for conversation in range(3):
        turns = [
            (
                ("Ann", "Bo")[n % 2],
                " ".join(pick.choices(VOCABULARY, WEIGHTS, k=pick.randint(1, 20))),
            )
            for n in range(200)
        ]
        write(sqlite_store, dialogue(f"c{conversation}", turns))
    write(sqlite_store, dialogue("same", [("Ann", "w00x w01x w05x")] * 60))
    index_full_text(sqlite_store)
    return sqlite_store


@pytest.fixture
def catalog(corpus: SqlStore) -> Catalog:
    return load_catalog(corpus, WordEncoder())


@pytest.fixture
def halves_used(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every search in halves (however small the store, however busy the machine); returns
    the list of the names of the threads that read the index's state (each half's connection)."""
    readers: list[str] = []
    state = query_module._fts_state

    def seen(connection: Any) -> Any:
        name = threading.current_thread().name
        readers.append(name)
        if name.startswith("proctor-search"):
            helper_began.set()
        elif WAIT_FOR_HELPER:  # a small index ranks its half quicker than a thread starts
            assert helper_began.wait(30)
        return state(connection)

    monkeypatch.setattr(query_module, "_fts_state", seen)
    monkeypatch.setattr(query_module, "_spare_core", lambda: True)
    monkeypatch.setattr(query_module, "CANDIDATES", 25)  # fewer than the matches: a cut
    return readers


def _queries() -> list[list[str]]:
    words = [*VOCABULARY[:3], VOCABULARY[5], *VOCABULARY[9:11], VOCABULARY[15]]
    return [[w] for w in words] + [
        list(q) for n in (2, 3) for q in itertools.combinations(words, n)
    ]


def _ranked(
    corpus: SqlStore,
    catalog: Catalog,
    terms: list[str],
    monkeypatch: pytest.MonkeyPatch,
    split: bool,
) -> list[_Match]:
    monkeypatch.setattr(query_module, "SPLIT_FROM", 0 if split else 10**9)
    helper_began.clear()
    with corpus.repos.search.read() as connection:
        return _full_text(connection, terms, WHOLE, catalog)


@pytest.mark.parametrize("by_sets", [False, True], ids=["one-statement", "sets-of-words"])
def test_the_halves_rank_as_one_statement(
    corpus: SqlStore,
    catalog: Catalog,
    halves_used: list[str],
    monkeypatch: pytest.MonkeyPatch,
    by_sets: bool,
) -> None:
    if by_sets:
        monkeypatch.setattr(_fts5_top, "EXHAUSTIVE_BELOW", 0)
    tied = 0
    for terms in _queries():
        one = _ranked(corpus, catalog, terms, monkeypatch, split=False)
        assert not halves_used
        two = _ranked(corpus, catalog, terms, monkeypatch, split=True)
        assert two == one, terms
        assert any(name.startswith("proctor-search") for name in halves_used), (terms, halves_used)
        halves_used.clear()
        scores = [match.score for match in one]
        tied += len(scores) == 25 and scores.count(scores[-1]) > 1
    assert tied  # some cut fell among equal scores


def test_a_half_seen_on_another_version_of_the_index_is_ranked_again(
    corpus: SqlStore, catalog: Catalog, halves_used: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper's connection began after a write (here: it sees another state): its half
    is ranked again on the caller's connection, which the rest of the search reads."""
    state = query_module._fts_state

    def other_on_helpers(connection: Any) -> Any:
        found = state(connection)
        return [*found, "later"] if threading.current_thread().name.startswith("proctor") else found

    for terms in (["w00x"], ["w01x", "w05x"], ["w00x", "w02x", "w10x"]):
        one = _ranked(corpus, catalog, terms, monkeypatch, split=False)
        monkeypatch.setattr(query_module, "_fts_state", other_on_helpers)
        assert _ranked(corpus, catalog, terms, monkeypatch, split=True) == one, terms
        monkeypatch.setattr(query_module, "_fts_state", state)


def test_with_every_helper_busy_the_caller_ranks_both_halves(
    corpus: SqlStore, catalog: Catalog, halves_used: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    busy, release = ThreadPoolExecutor(1), threading.Event()
    busy.submit(release.wait)
    monkeypatch.setattr(query_module, "_helpers", busy)
    monkeypatch.setattr(__import__(__name__, fromlist=["_"]), "WAIT_FOR_HELPER", False)
    try:
        for terms in (["w00x"], ["w01x", "w05x"]):
            one = _ranked(corpus, catalog, terms, monkeypatch, split=False)
            assert _ranked(corpus, catalog, terms, monkeypatch, split=True) == one, terms
    finally:
        release.set()
        busy.shutdown()
    assert halves_used and not any(name.startswith("proctor") for name in halves_used)


def test_a_small_index_or_a_busy_machine_ranks_in_one_statement(
    corpus: SqlStore, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int | None] = []
    split_at = query_module._split_at

    def seen(*args: Any) -> Any:
        asked.append(split_at(*args))
        return asked[-1]

    monkeypatch.setattr(query_module, "_split_at", seen)
    with corpus.repos.search.read() as connection:
        _full_text(connection, ["w00x", "w01x"], WHOLE, catalog)  # 660 documents: too few
        monkeypatch.setattr(query_module, "SPLIT_FROM", 0)
        monkeypatch.setattr(query_module, "_spare_core", lambda: False)
        _full_text(connection, ["w00x", "w01x"], WHOLE, catalog)  # no idle core
        monkeypatch.setattr(query_module, "_spare_core", lambda: True)
        _full_text(connection, ["w00x", "w01x"], WHOLE, None)  # no held copy
        _full_text(connection, ["w00x", "w01x"], WHOLE, catalog)
    assert asked[:3] == [None, None, None]
    assert asked[3] is not None and catalog.row_ids[0] < asked[3] <= catalog.row_ids[-1]


def test_the_split_leaves_about_half_the_words_below(
    sqlite_store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 short turns and 100 long ones: the split lies among the long ones (each weighs
    the square root of its length), not at the middle document (a short one)."""
    short = [("Ann", "w00x")] * 300
    long = [("Bo", " ".join(["w00x w01x w02x w03x"] * 25))] * 100
    write(sqlite_store, dialogue("short", short))
    write(sqlite_store, dialogue("long", long))
    index_full_text(sqlite_store)
    catalog = load_catalog(sqlite_store, WordEncoder())
    monkeypatch.setattr(query_module, "SPLIT_SAMPLE", 1)
    with sqlite_store.repos.search.read() as connection:
        split = query_module._middle(connection, catalog)
        assert query_module._middle(connection, catalog) == split  # kept
    rows = [int(row_id) for row_id in catalog.row_ids]
    authors = catalog.rows.authors
    assert len(rows) == 400
    assert authors[rows.index(split)] == "Bo"  # among the long turns
    assert authors[len(rows) // 2] == "Ann"  # the middle document is a short one


def _holding(connection: Any, expression: str, split: int) -> tuple[int, int]:
    below, above = (
        int(
            connection.exec_driver_sql(
                f"SELECT count(*) FROM search_fts WHERE search_fts MATCH ? AND rowid {side} ?",
                (expression, split),
            ).scalar_one()
        )
        for side in ("<", ">=")
    )
    return below, above


def test_the_split_halves_the_documents_the_query_ranks_first(
    sqlite_store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documents holding both words of a question lie mostly among the last turns, and
    those holding one word alone mostly among the first: the split halves the ones that
    hold both (ranked first), wherever a split for every question would fall, and a
    question whose rarer word no other shares halves those holding any word."""
    first = [("Ann", f"w00x filler {n}") for n in range(600)]
    first += [("Ann", "w00x w01x")] * 200
    last = [("Bo", "w00x w01x tail")] * 600 + [("Bo", "w02x")] * 300
    write(sqlite_store, dialogue("first", first))
    write(sqlite_store, dialogue("last", last))
    index_full_text(sqlite_store)
    catalog = load_catalog(sqlite_store, WordEncoder())
    monkeypatch.setattr(query_module, "SPLIT_FROM", 0)
    monkeypatch.setattr(query_module, "_spare_core", lambda: True)
    with sqlite_store.repos.search.read() as connection:
        split = query_module._split_at(connection, ["w00x", "w01x"], catalog)
        assert split is not None
        below, above = _holding(connection, '"w00x" AND "w01x"', split)
        assert below + above >= 800  # and a few whose neighbouring turns hold one
        assert abs(below - above) <= 80, (below, above)  # within the sample's error
        # The split for every question alike (by the documents' lengths) leaves most of
        # the documents holding both above it.
        below, above = _holding(
            connection, '"w00x" AND "w01x"', query_module._middle(connection, catalog)
        )
        assert above > 2 * below, (below, above)
        alone = query_module._split_at(connection, ["w01x", "w02x"], catalog)
        assert alone is not None
        below, above = _holding(connection, '"w01x" OR "w02x"', alone)
        assert abs(below - above) <= 110, (below, above)
        # Too few sampled documents to tell: the split for every question.
        few = query_module._split_at(connection, ["tail"], catalog)
        assert few is not None
        monkeypatch.setattr(query_module, "BALANCE_SAMPLE", 10**6)
        assert query_module._split_at(connection, ["tail"], catalog) == query_module._middle(
            connection, catalog
        )
