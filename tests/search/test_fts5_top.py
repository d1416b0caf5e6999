"""FTS5's best matches found by ranking sets of the query's words (``_fts5_top.py``) are the
exhaustive ranking's: the same documents with bit-identical BM25 scores, on a corpus of
common and rare words where the sets do settle early."""

from __future__ import annotations

import itertools
import random

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection

from proctor.search import _fts5_top as top
from proctor.search import _query as query_module
from proctor.search import index_full_text
from proctor.search._query import _full_text
from proctor.search._vectors import Scope
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write

# Zipf-like: the first words are in most documents, the last in a few.
VOCABULARY = [f"w{n:02d}x" for n in range(24)]
WEIGHTS = [1 / (n + 1) for n in range(24)]
SPEAKERS = ["Ann", "Bo"]

_RANKED = text(
    "SELECT rowid, -bm25(search_fts, 1.0, 0.4) FROM search_fts "
    "WHERE search_fts MATCH :match ORDER BY bm25(search_fts, 1.0, 0.4) LIMIT :limit"
)


@pytest.fixture
def corpus(sqlite_store: SqlStore) -> SqlStore:
    """600 turns of 1–30 words drawn by frequency (their neighbours are context too)."""
    pick = random.Random(18)
    for conversation in range(3):
        turns = [
            (
                SPEAKERS[n % 2],
                " ".join(pick.choices(VOCABULARY, WEIGHTS, k=pick.randint(1, 30))),
            )
            for n in range(200)
        ]
        write(sqlite_store, dialogue(f"c{conversation}", turns))
    index_full_text(sqlite_store)
    return sqlite_store


def _every_match(connection: Connection, terms: list[str]) -> list[tuple[int, float]]:
    """The exhaustive ranking, every match, best first (ties by row id)."""
    found = connection.execute(
        _RANKED, {"match": top.or_expression(terms), "limit": 1_000_000}
    ).all()
    return sorted(((int(r), float(s)) for r, s in found), key=lambda item: (-item[1], item[0]))


def _queries() -> list[list[str]]:
    common, middle, rare = VOCABULARY[:3], VOCABULARY[8:10], VOCABULARY[20:22]
    words = common + middle + rare
    return [list(q) for size in (2, 3) for q in itertools.combinations(words, size)]


@pytest.mark.parametrize("limit", [1, 5, 20, 80])
def test_the_best_matches_are_the_exhaustive_rankings_with_the_same_scores(
    corpus: SqlStore, limit: int
) -> None:
    settled_early = 0
    with corpus.repos.search.read() as connection:
        for terms in _queries():
            asked: list[str] = []

            def rank(expression: str, asked: list[str] = asked) -> list[tuple[int, float]]:
                asked.append(expression)
                found = connection.execute(_RANKED, {"match": expression, "limit": limit})
                return [(int(r), float(s)) for r, s in found]

            got = top.best_matches(connection, terms, rank, limit, exhaustive_below=0, max_sets=99)
            every = _every_match(connection, terms)
            exhaustive = dict(every)
            assert [s for _, s in got] == [s for _, s in every[:limit]], terms
            assert all(exhaustive[row_id] == score for row_id, score in got), terms
            # Strictly above the last score kept, the documents are the same ones.
            last = every[:limit][-1][1]
            assert {r for r, s in got if s > last} == {r for r, s in every if s > last}, terms
            if top.or_expression(terms) not in asked and len(asked) < 2 ** len(terms) - 1:
                settled_early += 1
    # The corpus exercises the pruning, not only its fallbacks.
    assert settled_early >= len(_queries()) // 4, settled_early


def test_a_search_that_gives_up_on_the_sets_ranks_every_match(corpus: SqlStore) -> None:
    terms = VOCABULARY[:3]
    with corpus.repos.search.read() as connection:
        asked: list[str] = []

        def rank(expression: str) -> list[tuple[int, float]]:
            asked.append(expression)
            found = connection.execute(_RANKED, {"match": expression, "limit": 1_000})
            return [(int(r), float(s)) for r, s in found]

        got = top.best_matches(connection, terms, rank, 1_000, exhaustive_below=0, max_sets=1)
        assert asked[-1] == top.or_expression(terms)
        assert sorted(got, key=lambda i: (-i[1], i[0])) == _every_match(connection, terms)[:1_000]


@pytest.mark.parametrize(
    "scope",
    [Scope(None, None, None), Scope(None, "c1", None), Scope(None, None, ("message",))],
    ids=["everything", "one conversation", "messages"],
)
def test_the_searchs_full_text_matches_are_those_of_the_exhaustive_ranking(
    corpus: SqlStore, scope: Scope, monkeypatch: pytest.MonkeyPatch
) -> None:
    with corpus.repos.search.read() as connection:
        for terms in _queries()[::5]:
            monkeypatch.setattr(top, "EXHAUSTIVE_BELOW", 1 << 60)  # always exhaustive
            exhaustive = _full_text(connection, terms, scope)
            monkeypatch.setattr(top, "EXHAUSTIVE_BELOW", 0)
            monkeypatch.setattr(query_module, "CANDIDATES", 30)
            pruned = _full_text(connection, terms, scope)
            monkeypatch.setattr(query_module, "CANDIDATES", 1_000)
            best = sorted(exhaustive, key=lambda m: (-m.score, m.row_id))[:30]
            assert [m.score for m in pruned] == [m.score for m in best], terms
            assert set(pruned) <= set(exhaustive), terms


@pytest.mark.parametrize("limit", [5, 40])
def test_every_order_of_three_words_gives_the_exhaustive_scores_bit_for_bit(
    corpus: SqlStore, limit: int
) -> None:
    """The rarest word first, between or last in the query: a group's words are added in an
    order that gives the full query's sum (``_groups``)."""
    words = [VOCABULARY[0], VOCABULARY[1], VOCABULARY[9], VOCABULARY[21]]
    with corpus.repos.search.read() as connection:
        for chosen in itertools.combinations(words, 3):
            for order in itertools.permutations(chosen):
                terms = list(order)
                asked: list[str] = []

                def rank(expression: str, asked: list[str] = asked) -> list[tuple[int, float]]:
                    asked.append(expression)
                    found = connection.execute(_RANKED, {"match": expression, "limit": limit})
                    return [(int(r), float(s)) for r, s in found]

                got = top.best_matches(
                    connection, terms, rank, limit, exhaustive_below=0, max_sets=99
                )
                every = _every_match(connection, terms)
                exhaustive = dict(every)
                assert [s for _, s in got] == [s for _, s in every[:limit]], terms
                assert all(exhaustive[row_id] == score for row_id, score in got), terms
                # One statement ranks the documents holding the rarest word with another.
                assert " OR " in asked[0], asked


def _sqlite_varint(value: int) -> bytes:
    """SQLite's variable-length encoding (``sqlite3PutVarint``): 7 bits a byte, high bit
    set on all but the last; from 2**56, nine bytes, the last holding eight bits."""
    if value >= 1 << 56:
        head = [((value >> (8 + 7 * i)) & 0x7F) | 0x80 for i in range(8)][::-1]
        return bytes([*head, value & 0xFF])
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(out[::-1])


def test_varints_read_what_sqlite_writes() -> None:
    values = [0, 1, 127, 128, 16_383, 16_384, 311_165, 2**32 + 5, 2**56 - 1, 2**56, 2**64 - 1]
    assert top.varints(b"".join(_sqlite_varint(v) for v in values)) == values
    assert top.averages_of(b"") is None and top.averages_of(None) is None
    assert top.averages_of(_sqlite_varint(311_165) + _sqlite_varint(9)) == [311_165, 9]
