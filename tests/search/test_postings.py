"""The common words' postings (``_postings.py``) rank as FTS5 does: the same documents with
bit-identical BM25 scores, for words kept and words read at search time, after documents
were added above the postings and removed below them, with counts whose weighted sums
round differently from a product; and they are built, kept and dropped when they should
be, by the background indexer and the detached one."""

from __future__ import annotations

import itertools
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection

from proctor.search import __main__ as detached
from proctor.search import _documents, _fts5_top, _postings, index_full_text
from proctor.search import _query as query_module
from proctor.search import search as run_search
from proctor.search._background import BackgroundIndexer
from proctor.search._catalog import Catalog, hold_vectors, load_catalog
from proctor.search._handoff import SQLITE_VARIABLE, IndexerLock
from proctor.search._write import delete_rows
from proctor.store import SqlStore
from tests.backends import open_real_store
from tests.search.helpers import dialogue, write
from tests.search.test_vectors import WordEncoder

# Zipf-like: the first words are in most documents, the last in a few.
VOCABULARY = [f"w{n:02d}x" for n in range(20)]
WEIGHTS = [1 / (n + 1) for n in range(20)]
WEIGHT = 0.4

_EVERY = text(
    "SELECT rowid, -bm25(search_fts, 1.0, 0.4) FROM search_fts WHERE search_fts MATCH :match"
)


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Postings for a store of hundreds of documents: words in 60 or more are kept."""
    monkeypatch.setattr(_postings, "POSTINGS_FROM_ROWS", 100)
    monkeypatch.setattr(_postings, "POSTINGS_FROM", 60)


def _turns(pick: random.Random, count: int) -> list[tuple[str, str]]:
    return [
        (
            ("Ann", "Bo")[n % 2],
            " ".join(pick.choices(VOCABULARY, WEIGHTS, k=pick.randint(1, 25))),
        )
        for n in range(count)
    ]


@pytest.fixture
def corpus(sqlite_store: SqlStore) -> SqlStore:
    """600 turns of words drawn by frequency; turns that repeat a word hundreds of times
    (counts past ``_postings._TABLE``, and their neighbours' context); 40 turns repeated
    word for word (ties at the cut); words that stem alike ("tests", "testing")."""
    pick = random.Random(18)
    for conversation in range(3):
        write(sqlite_store, dialogue(f"c{conversation}", _turns(pick, 200)))
    write(
        sqlite_store,
        dialogue(
            "long",
            [
                ("Ann", "w00x " * 300 + "w03x"),
                ("Bo", "w01x w03x " * 270),
                ("Ann", "tests testing w02x"),
                ("Bo", "tested w00x w02x " * 3),
            ],
        ),
    )
    write(sqlite_store, dialogue("same", [("Ann", "w00x w01x w05x")] * 40))
    index_full_text(sqlite_store)
    return sqlite_store


def _exhaustive(connection: Connection, terms: list[str]) -> list[tuple[int, float]]:
    found = connection.execute(_EVERY, {"match": _fts5_top.or_expression(terms)}).all()
    return sorted(((int(r), float(s)) for r, s in found), key=lambda item: (-item[1], item[0]))


def _queries() -> Iterator[list[str]]:
    common, middle, rare = VOCABULARY[:3], VOCABULARY[6:8], VOCABULARY[17:19]
    words = common + middle + rare
    for size in (1, 2, 3):
        yield from (list(q) for q in itertools.combinations(words, size))
    yield [VOCABULARY[0], VOCABULARY[1], VOCABULARY[5], VOCABULARY[9], VOCABULARY[18]]
    yield ["tests", "w00x"]
    yield ["testing", "tests", "w02x"]  # two words, one stem: two phrases, as FTS5 adds them
    yield [VOCABULARY[3], VOCABULARY[0]]  # the long turns


def _assert_same(
    connection: Connection, catalog: Catalog | None, terms: list[str], limit: int
) -> list[tuple[int, float]]:
    got = _postings.ranked(connection, terms, limit, WEIGHT, catalog)
    assert got is not None, terms
    every = _exhaustive(connection, terms)
    exhaustive = dict(every)
    assert [s for _, s in got] == [s for _, s in every[:limit]], terms
    assert all(exhaustive[row_id] == score for row_id, score in got), terms
    assert got == every[:limit], terms  # ties by row id, as FTS5's sorter keeps them
    return got


@pytest.mark.parametrize("limit", [1, 7, 50, 10_000])
def test_the_postings_rank_as_fts5_does_bit_for_bit(corpus: SqlStore, limit: int) -> None:
    report = _postings.refresh_postings(corpus)
    assert report.built and report.words >= 3
    catalog = load_catalog(corpus, WordEncoder())
    with corpus.repos.search.read() as connection:
        kept = {row[0] for row in connection.execute(text("SELECT term FROM search_fts_postings"))}
        common = {
            row[0]
            for row in connection.execute(
                text("SELECT term FROM search_fts_terms WHERE doc >= :least"), {"least": 60}
            )
        }
        assert kept == common | {_postings.LENGTHS}
        words = {word for terms in _queries() for word in terms}
        assert words & kept and words - kept  # some words kept, some read at search time
        for terms in _queries():
            _assert_same(connection, catalog, terms, limit)


def test_weighted_counts_are_summed_one_instance_at_a_time() -> None:
    """Body instances (1.0 each), then context instances (0.4 each), added one at a time,
    as FTS5's BM25 adds them: within the table and past it (counts of 256 and more)."""
    import numpy as np

    pick = random.Random(11)
    pairs = [(pick.randint(0, 40), pick.randint(0, 40)) for _ in range(300)]
    pairs += [(300, 0), (0, 270), (1, 700), (256, 256), (5, 255), (255, 5)]
    body = np.array([b for b, _ in pairs], dtype=np.uint16)
    context = np.array([c for _, c in pairs], dtype=np.uint16)
    expected = []
    for b, c in pairs:
        total = float(b)
        for _ in range(c):
            total += WEIGHT
        expected.append(total)
    assert _postings._weighted(body, context, WEIGHT).tolist() == expected
    assert expected[pairs.index((0, 270))] != 270 * WEIGHT  # a product would differ


def test_long_turns_rank_as_fts5_does(corpus: SqlStore) -> None:
    """A word 300 times in a turn (past the table), and a turn whose neighbours hold a word
    hundreds of times."""
    _postings.refresh_postings(corpus)
    catalog = load_catalog(corpus, WordEncoder())
    with corpus.repos.search.read() as connection:
        got = _assert_same(connection, catalog, ["w03x", "w01x"], 20)
        long_turns = {
            int(row[0])
            for row in connection.execute(
                text("SELECT row_id FROM search_documents WHERE conversation_id = 'long'")
            )
        }
        assert long_turns & {row_id for row_id, _ in got}
        _assert_same(connection, catalog, ["w00x"], 5)


def test_documents_added_and_removed_since_the_build_rank_as_fts5_does(
    corpus: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removed below ``through``, and added above it (the removed ones again, from their
    sources, and a new conversation), not built again."""
    _postings.refresh_postings(corpus)
    monkeypatch.setattr(_postings, "REFRESH_SHARE", 1.0)
    with corpus.repos.search.read() as connection:
        before = connection.execute(text("SELECT max(row_id) FROM search_documents")).scalar()
        removed = [
            int(row[0])
            for row in connection.execute(
                text("SELECT row_id FROM search_documents WHERE row_id % 7 = 0 LIMIT 40")
            )
        ]
    with corpus.repos.search.write() as connection:
        delete_rows(connection, removed)
    write(corpus, dialogue("later", _turns(random.Random(5), 60)))
    index_full_text(corpus)
    assert not _postings.refresh_postings(corpus).built
    catalog = load_catalog(corpus, WordEncoder())
    with corpus.repos.search.read() as connection:
        after = connection.execute(text("SELECT max(row_id) FROM search_documents")).scalar()
        assert after > before
        for terms in _queries():
            got = _assert_same(connection, catalog, terms, 30)
            assert not set(removed) & {row_id for row_id, _ in got}


@pytest.mark.parametrize("catalog_held", ["none", "stale", "current"])
def test_without_a_current_catalog_the_index_tells_which_documents_are_left(
    corpus: SqlStore, catalog_held: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No catalog (full text only, a one-off search) or one of an earlier state of the
    index: removed documents are left out by asking the index, also when most of the
    best ones were removed."""
    monkeypatch.setattr(_postings, "REFRESH_SHARE", 1.0)
    _postings.refresh_postings(corpus)
    stale = load_catalog(corpus, WordEncoder())
    with corpus.repos.search.read() as connection:
        best = _postings.ranked(connection, ["w00x", "w01x"], 60, WEIGHT)
        assert best is not None
    removed = [row_id for row_id, _ in best[:50]]
    with corpus.repos.search.write() as connection:
        delete_rows(connection, removed)
    catalog: Catalog | None = None
    if catalog_held == "stale":
        catalog = stale
    elif catalog_held == "current":
        catalog = load_catalog(corpus, WordEncoder())
    asked: list[int] = []
    present = _postings._present

    def counted(*args: Any) -> Any:
        asked.append(1)
        return present(*args)

    monkeypatch.setattr(_postings, "_present", counted)
    with corpus.repos.search.read() as connection:
        for terms in (["w00x", "w01x"], ["w00x"], ["w02x", "w18x", "w07x"]):
            for limit in (5, 20, 200):
                got = _assert_same(connection, catalog, terms, limit)
                assert not set(removed) & {row_id for row_id, _ in got}
    assert bool(asked) == (catalog_held != "current")  # a current catalog tells


def test_arrays_are_as_long_as_the_documents_however_high_the_row_ids(
    sqlite_store: SqlStore,
) -> None:
    """Every document replaced three times (a new title for its conversation: each takes a
    new row id): the lengths are kept per document, not per row id, and the ranking is
    still FTS5's."""
    corpus = sqlite_store
    pick = random.Random(21)
    conversations = {f"c{n}": _turns(pick, 150) for n in range(3)}
    for version in range(4):
        for conversation_id, turns in conversations.items():
            write(corpus, dialogue(conversation_id, turns, title=f"Version {version}"))
        index_full_text(corpus)
    report = _postings.refresh_postings(corpus)
    catalog = load_catalog(corpus, WordEncoder())
    with corpus.repos.search.read() as connection:
        documents = connection.execute(text("SELECT count(*) FROM search_documents")).scalar()
        assert report.through is not None and report.through > 3 * documents
        lengths = connection.execute(
            text(
                "SELECT documents, length(members), length(counts) FROM search_fts_postings "
                "WHERE term = ''"
            )
        ).one()
        assert tuple(lengths) == (documents, 4 * documents, 4 * documents)
        for terms in list(_queries())[::3]:
            _assert_same(connection, catalog, terms, 40)
            _assert_same(connection, None, terms, 40)


def test_a_store_without_the_postings_table_ranks_with_fts5(corpus: SqlStore) -> None:
    """A store opened read-only by a Proctor newer than its schema (no upgrade): no
    postings table, and the search ranks as before."""
    with corpus.repos.search.write() as connection:
        connection.execute(text("DROP TABLE search_fts_postings"))
    with corpus.repos.search.read() as connection:
        assert _postings.ranked(connection, ["w00x", "w01x"], 10, WEIGHT) is None
    hits = run_search(corpus, "w00x w01x", encoder=None, limit=5).hits
    assert len(hits) == 5


def test_without_numpy_nothing_is_built_and_fts5_ranks(
    corpus: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full-text-only install (no ``embeddings`` extra) has no numpy."""
    _postings.refresh_postings(corpus)
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy fails
    assert not _postings.numpy_installed()
    assert not _postings.refresh_postings(corpus, force=True).built
    with corpus.repos.search.read() as connection:
        assert _postings.ranked(connection, ["w00x", "w01x"], 10, WEIGHT) is None


def test_the_postings_are_built_when_due_and_dropped_when_the_index_is_small(
    corpus: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _postings.refresh_postings(corpus)
    assert first.built and first.through is not None
    assert not _postings.refresh_postings(corpus).built  # nothing changed
    write(corpus, dialogue("more", _turns(random.Random(7), 120)))  # > 10 % added
    index_full_text(corpus)
    again = _postings.refresh_postings(corpus)
    assert again.built and again.through is not None and again.through > first.through
    with corpus.repos.search.read() as connection:
        throughs = {
            int(row[0])
            for row in connection.execute(text("SELECT through FROM search_fts_postings"))
        }
    assert throughs == {again.through}
    monkeypatch.setattr(_postings, "POSTINGS_FROM_ROWS", 10**9)
    assert not _postings.refresh_postings(corpus).built
    with corpus.repos.search.read() as connection:
        left = connection.execute(text("SELECT count(*) FROM search_fts_postings")).scalar()
    assert left == 0


def test_a_build_asked_to_stop_leaves_the_rows_as_they_were(corpus: SqlStore) -> None:
    first = _postings.refresh_postings(corpus)
    with corpus.repos.search.read() as connection:
        rows = connection.execute(text("SELECT * FROM search_fts_postings ORDER BY term")).all()
    stopped = _postings.refresh_postings(corpus, force=True, should_stop=lambda: True)
    assert first.built and not stopped.built
    with corpus.repos.search.read() as connection:
        assert (
            connection.execute(text("SELECT * FROM search_fts_postings ORDER BY term")).all()
            == rows
        )


def test_counts_past_two_bytes_are_kept_wide(
    sqlite_store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word 70,000 times in one turn (a body longer than a document holds today): its
    counts are kept as four-byte integers."""
    monkeypatch.setattr(_documents, "BODY_TEXT_CHARS", 400_000)
    monkeypatch.setattr(_postings, "POSTINGS_FROM", 1)
    pick = random.Random(3)
    turns = [*_turns(pick, 150), ("Ann", "zq " * 70_000), ("Bo", "zq w01x")]
    write(sqlite_store, dialogue("wide", turns))
    index_full_text(sqlite_store)
    _postings.refresh_postings(sqlite_store)
    catalog = load_catalog(sqlite_store, WordEncoder())
    with sqlite_store.repos.search.read() as connection:
        row = connection.execute(
            text("SELECT members, counts FROM search_fts_postings WHERE term = 'zq'")
        ).one()
        assert len(row[1]) == 2 * 4 * (len(row[0]) // 4)
        _assert_same(connection, catalog, ["zq", "w01x"], 20)


def test_a_word_stems_as_the_index_does() -> None:
    assert _postings._stem("testing") == _postings._stem("tests") == "test"
    assert _postings._stem("Commits") == "commit"
    assert _postings._stem("config.json") is None  # two tokens: FTS5 reads a phrase


def test_a_held_search_ranks_from_the_postings_with_the_same_hits(
    corpus: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = WordEncoder()
    hold_vectors(corpus)
    monkeypatch.setattr(query_module, "EXHAUSTIVE_BELOW", 0)
    before = run_search(corpus, "w00x w01x w07x", encoder=encoder, limit=15)
    _postings.refresh_postings(corpus)
    used: list[object] = []
    ranked = _postings.ranked

    def spy(*args: object, **kwargs: object) -> object:
        found = ranked(*args, **kwargs)  # type: ignore[arg-type]
        used.append(found)
        return found

    monkeypatch.setattr(query_module, "postings_ranked", spy)
    after = run_search(corpus, "w00x w01x w07x", encoder=encoder, limit=15)
    assert used and used[0] is not None
    assert [(h.doc_id, h.score) for h in after.hits] == [(h.doc_id, h.score) for h in before.hits]


def test_the_background_indexer_builds_the_postings(corpus: SqlStore) -> None:
    """Full text only: the indexer lock is taken for the build and let go after (a
    detached indexer may embed meanwhile)."""
    indexer = BackgroundIndexer(lambda: corpus, encoder=None, interval=0.05).start()
    try:
        assert indexer.wait_complete(30)
        other = IndexerLock(corpus)
        assert other.acquire()
        other.release()
    finally:
        indexer.stop()
    with corpus.repos.search.read() as connection:
        kept = connection.execute(text("SELECT count(*) FROM search_fts_postings")).scalar()
    assert kept and kept >= 4


def test_the_detached_indexer_builds_the_postings(
    corpus: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m proctor.search`` (``proctor ingest``'s hand-off), in process: full text,
    then the postings, then embeddings (none here: no encoder)."""
    monkeypatch.setenv(SQLITE_VARIABLE, str(tmp_path / "proctor.db"))
    monkeypatch.setattr(detached, "load_encoder", lambda: None)
    # The SQLite file itself, also on the PostgreSQL pass (which maps a path to a database).
    monkeypatch.setattr(detached, "open_store", open_real_store)
    assert detached.main([]) == 0
    with corpus.repos.search.read() as connection:
        words = connection.execute(
            text("SELECT count(*) FROM search_fts_postings WHERE term != ''")
        ).scalar()
    assert words and words >= 3
