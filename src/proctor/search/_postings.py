"""Common words' documents with their counts, kept beside FTS5, so that a search of common
words is ranked in numpy instead of by FTS5 scoring every match.

FTS5's ``bm25()`` costs about a microsecond per match (it decodes the match's positions
and reads its length): "git commit" on the 1 GB bench store has 24,455 matches, about
30 ms of CPU for the best 1,000, most of a search's time. BM25 needs, per word and document, only
how often the word occurs in the document's body and context, the document's length, and
statistics of the whole index. This module keeps those for the words held by at least
``POSTINGS_FROM`` documents (``search_fts_postings``, SQLite only, migration 0018):

- the row ``""``, ``through`` the highest row id covered: the row ids of the documents up
  to it (``members``, ascending, ``uint32``) and each one's length in tokens, body and
  context (``counts``, ``uint32``);
- a row per word (FTS5's token: stemmed): where its documents stand in that list
  (``members``, ``uint32``) and its count in each one's body, then in each one's context
  (``counts``, ``uint16``, or ``uint32`` where a count needs it: told by the blob's
  length). Positions, not row ids: the arrays a search fills are as long as the
  documents, however high the row ids went (every replaced document takes a new one).

A row id's text never changes (``_write.py``: a replaced document gets a new, higher row
id, and SQLite's AUTOINCREMENT never reuses one), so what is kept stays right for every
document up to ``through`` still in the index. ``ranked`` then scores, for a search over
the whole index, the documents up to ``through`` in numpy and those above it with FTS5
itself, and merges the two (which documents up to ``through`` are still indexed: from a
server's catalog when it holds the index the search sees, else asked of the index for the
best ones): the same best documents with the same scores as FTS5's own ranking, bit for bit
(FTS5's operations in its order: the weighted frequency summed body first, one instance
at a time, ``_weighted``; IDFs from the index's current counts; ties by row id).
``tests/search/test_postings.py`` holds the two equal. A word no row keeps (a rare one,
or one grown common since the build) is read from ``search_fts_instances`` for the
search (a rare word's occurrences are few).

``refresh_postings`` (the background indexer after a full-text pass, ``python -m
proctor.search``, ``index_sources`` and ``proctor search --index-only``) builds them once
the index holds ``POSTINGS_FROM_ROWS`` documents, and again when the documents added or
removed since reach ``REFRESH_SHARE`` of the index: it reads each word's counts from
``search_fts_instances`` (one word at a time; on the 1 GB bench store 17 s of CPU for 579
words and 10.8 million postings, 88 MB), then replaces the rows in one short transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError

from proctor.search._catalog import Catalog, index_signature
from proctor.search._fts5_top import (
    K1,
    averages_of,
    fts5_averages,
    fts5_idf,
    indexed_rows,
    or_expression,
    term_rows,
    varints,
)
from proctor.search._unchanged import unless_changed
from proctor.search._write import IN_CLAUSE, chunks

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from proctor.store import SqlStore

POSTINGS_FROM = 5_000
"""Documents a word must be held by for its postings to be kept. Below, reading its
occurrences for a search costs a few milliseconds (``search_fts_instances``)."""
POSTINGS_FROM_ROWS = 20_000
"""Documents in the index below which no postings are kept: FTS5 ranks every query of a
store this small in a few milliseconds."""
REFRESH_SHARE = 0.1
"""Documents added or removed since the build, as a share of the index, from which the
postings are built again (those added are ranked by FTS5 until then)."""
B = 0.75
"""FTS5's BM25 b (``fts5_aux.c``)."""
TOKENIZE = "porter unicode61"
"""The tokenizer of ``search_fts`` (migration 0005): a query's words are stemmed by it."""
LENGTHS = ""
"""The ``term`` of the row holding every document's length (no token is empty)."""

_WORDS = text("SELECT term FROM search_fts_terms WHERE doc >= :least AND term != '' ORDER BY term")
_COUNTS = text(
    "SELECT group_concat(doc || ',' || body || ',' || context) FROM ("
    "SELECT doc, sum(col = 'body') AS body, sum(col = 'context') AS context "
    "FROM search_fts_instances WHERE term = :term AND doc <= :through GROUP BY doc)"
)
"""A word's documents up to ``through``, each with its count in body and context, as one
string (``doc,body,context,…``, ascending): parsed by numpy, not a row at a time."""
_SIZES = text("SELECT id, sz FROM search_fts_docsize WHERE id <= :through")
_KEPT = text(
    "SELECT term, through, members, counts FROM search_fts_postings WHERE term IN ({terms})"
)
_STATE = text(
    "SELECT (SELECT block FROM search_fts_data WHERE id = 1), through, documents "
    "FROM (SELECT 1) LEFT JOIN search_fts_postings ON term = :lengths"
)
"""In one statement (an unchanged store is checked in few): FTS5's averages record (its
first number: the documents indexed) and the postings' coverage, if any."""


@dataclass(frozen=True, slots=True)
class PostingsReport:
    """What ``refresh_postings`` did."""

    built: bool
    """Built (False: not due, too small a store, or not SQLite)."""
    words: int
    """Words whose postings are kept."""
    postings: int
    """Documents of those words, all together."""
    through: int | None
    """The highest row id covered."""
    seconds: float


def refresh_postings(
    store: SqlStore, *, force: bool = False, should_stop: Callable[[], bool] | None = None
) -> PostingsReport:
    """Build the postings when due (or ``force``): none yet and the index is large enough,
    or ``REFRESH_SHARE`` of the index added or removed since. Dropped when the index is
    smaller than ``POSTINGS_FROM_ROWS``. Call it holding the store's indexer lock (one
    builder at a time); readers go on meanwhile, and the rows are replaced in one
    transaction. ``should_stop`` is asked between words: True leaves the rows as they
    were."""
    started = time.perf_counter()
    if store.dialect != "sqlite" or not numpy_installed():
        return PostingsReport(False, 0, 0, None, 0.0)
    with store.repos.search.read() as connection:
        block, *kept = connection.execute(_STATE, {"lengths": LENGTHS}).one()
        averages = averages_of(block)
        rows = averages[0] if averages is not None else 0
        state = None if kept[0] is None else kept
        if rows < POSTINGS_FROM_ROWS:
            due, through = False, None
        else:
            due = (
                force
                or state is None
                or _changed_since(connection, state) >= (REFRESH_SHARE * rows)
            )
            through = connection.execute(text("SELECT max(id) FROM search_fts_docsize")).scalar()
    if rows < POSTINGS_FROM_ROWS and state is not None:
        with store.repos.search.write() as connection:
            connection.execute(text("DELETE FROM search_fts_postings"))
    if not due or through is None or through >= 2**32:
        return PostingsReport(False, 0, 0, None, time.perf_counter() - started)
    built = _build(store, int(through), should_stop)
    if built is None:
        return PostingsReport(False, 0, 0, None, time.perf_counter() - started)
    with store.repos.search.write() as connection:
        connection.execute(text("DELETE FROM search_fts_postings"))
        connection.execute(
            text(
                "INSERT INTO search_fts_postings (term, through, documents, members, counts) "
                "VALUES (:term, :through, :documents, :members, :counts)"
            ),
            built,
        )
    words = len(built) - 1
    postings = sum(int(row["documents"]) for row in built if row["term"] != LENGTHS)
    return PostingsReport(True, words, postings, int(through), time.perf_counter() - started)


def may_rank(connection: Connection) -> bool:
    """Whether the index is large enough to have postings (``POSTINGS_FROM_ROWS``) and
    numpy is there: read before anything is counted for them (FTS5's own row count)."""
    rows = indexed_rows(connection)
    return rows is not None and rows >= POSTINGS_FROM_ROWS and numpy_installed()


def numpy_installed() -> bool:
    """Whether numpy can be imported (the ``embeddings`` extra brings it; a full-text-only
    install has none, and then FTS5 ranks as before)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def _changed_since(connection: Connection, state: Any) -> int:
    """Documents added above the postings' ``through`` and removed below it (counted once
    per version of the data: the server's indexer asks every few seconds)."""
    through, documents = int(state[0]), int(state[1])

    def counted() -> int:
        below = connection.execute(
            text("SELECT count(*) FROM search_fts_docsize WHERE id <= :through"),
            {"through": through},
        ).scalar_one()
        total = indexed_rows(connection) or 0
        return (total - int(below)) + (documents - int(below))

    return unless_changed(connection, ("postings changed since", through, documents), counted)


def _build(
    store: SqlStore, through: int, should_stop: Callable[[], bool] | None
) -> list[dict[str, Any]] | None:
    """The rows of the postings up to ``through``: the documents' and their lengths, then
    each common word's. Each is read in a transaction of its own (what a row id holds does
    not change; a document removed meanwhile is left out where it is found gone). None
    when ``should_stop`` said so."""
    import numpy as np

    with store.repos.search.read() as connection:
        found = [
            (int(row_id), sum(varints(bytes(sizes))))
            for row_id, sizes in connection.execute(_SIZES, {"through": through})
        ]
        words = [str(row[0]) for row in connection.execute(_WORDS, {"least": POSTINGS_FROM})]
    members = np.array([row_id for row_id, _ in found], dtype=np.int64)
    lengths = np.array([length for _, length in found], dtype="<u4")
    built = [
        {
            "term": LENGTHS,
            "through": through,
            "documents": len(members),
            "members": members.astype("<u4").tobytes(),
            "counts": lengths.tobytes(),
        }
    ]
    for word in words:
        if should_stop is not None and should_stop():
            return None
        with store.repos.search.read() as connection:
            counted = _read_counts(connection, word, through, members)
        if counted is None:
            continue
        positions, body, context = counted
        counts = np.concatenate([body, context]).astype(_count_type(body, context))
        built.append(
            {
                "term": word,
                "through": through,
                "documents": len(positions),
                "members": positions.astype("<u4").tobytes(),
                "counts": counts.tobytes(),
            }
        )
    return built


def _count_type(*counts: NDArray[np.int64]) -> str:
    return "<u2" if all(len(c) == 0 or int(c.max()) < 2**16 for c in counts) else "<u4"


def _read_counts(
    connection: Connection, word: str, through: int, members: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None:
    """``word``'s documents up to ``through`` as positions in ``members`` (ascending; one
    not there is left out) and its counts in their body and context, read from FTS5 now;
    None when no document of ``members`` holds it."""
    import numpy as np

    listed = connection.execute(_COUNTS, {"term": word, "through": through}).scalar()
    if not listed or not len(members):
        return None
    values = np.array(str(listed).split(","), dtype=np.int64).reshape(-1, 3)
    positions = np.minimum(np.searchsorted(members, values[:, 0]), len(members) - 1)
    there = members[positions] == values[:, 0]
    if not there.any():
        return None
    return positions[there], values[there, 1], values[there, 2]


# -- ranking ------------------------------------------------------------------------------


def ranked(
    connection: Connection,
    terms: Sequence[str],
    limit: int,
    context_weight: float,
    catalog: Catalog | None = None,
) -> list[tuple[int, float]] | None:
    """The best ``limit`` documents of the whole index holding any of ``terms``, by
    ``-bm25(search_fts, 1.0, context_weight)`` of ``or_expression(terms)`` (higher is
    better; ties by row id), as (row id, score); None when the postings cannot rank them
    (none kept, no numpy, or a word that is not one token). Which kept documents are
    still indexed: from ``catalog`` when it holds the index this transaction sees, else
    asked of the index for the best ones (``_present``)."""
    if not numpy_installed():
        return None
    import numpy as np

    stems = [_stem(term) for term in terms]
    if not terms or any(stem is None for stem in stems):
        return None
    wanted = sorted({LENGTHS, *(stem for stem in stems if stem is not None)})
    placeholders = ", ".join(f":t{i}" for i in range(len(wanted)))
    try:
        kept = {
            str(row[0]): row
            for row in connection.execute(
                text(_KEPT.text.format(terms=placeholders)),
                {f"t{i}": word for i, word in enumerate(wanted)},
            )
        }
    except OperationalError:  # a store opened read-only before migration 0018: no table
        return None
    lengths_row = kept.get(LENGTHS)
    statistics = _statistics(connection)
    if lengths_row is None or statistics is None:
        return None
    through = int(lengths_row[1])
    members = np.frombuffer(lengths_row[2], dtype="<u4")
    lengths = np.frombuffer(lengths_row[3], dtype="<u4")
    if len(members) != len(lengths):
        return None
    rows, average = statistics
    held = catalog is not None and _current(connection, catalog)
    alive = _alive(catalog, members) if catalog is not None and held else None
    scores = np.zeros(len(members), dtype=np.float64)
    for term, stem in zip(terms, stems, strict=True):
        assert stem is not None
        found = _postings(connection, kept.get(stem), stem, through, members)
        if found is None:
            continue
        positions, body, context = found
        if alive is not None:
            present = alive[positions]
            positions, body, context = positions[present], body[present], context[present]
        frequency = _weighted(body, context, context_weight)
        size = lengths[positions].astype(np.float64)
        idf = fts5_idf(rows, term_rows(connection, term).frequency)
        scores[positions] += idf * (
            (frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * size / average))
        )
    best = (
        _best(scores, members, limit)
        if alive is not None
        else _present(connection, scores, members, limit)
    )
    above = connection.execute(
        text(
            f"SELECT rowid, -bm25(search_fts, 1.0, {context_weight}) AS score FROM search_fts "
            f"WHERE search_fts MATCH :match AND rowid > :through ORDER BY score DESC "
            f"LIMIT {int(limit)}"
        ),
        {"match": or_expression(terms), "through": through},
    ).all()
    if not above:
        return best
    merged = best + [(int(row[0]), float(row[1])) for row in above]
    merged.sort(key=lambda row: (-row[1], row[0]))
    return merged[:limit]


_EXISTING = text("SELECT id FROM search_fts_docsize WHERE id IN ({ids})")


def _present(
    connection: Connection, scores: NDArray[np.float64], members: NDArray[np.int64], limit: int
) -> list[tuple[int, float]]:
    """``_best`` among the documents still indexed: the best are asked for, twice as many
    as wanted, and more while too many of them were removed since the postings' build
    (a tenth of the index at most, ``REFRESH_SHARE``)."""
    asked = 2 * limit
    while True:
        best = _best(scores, members, asked)
        existing: set[int] = set()
        for chunk in chunks([row_id for row_id, _ in best], IN_CLAUSE):
            statement = text(_EXISTING.text.format(ids=", ".join(str(int(i)) for i in chunk)))
            existing.update(int(row[0]) for row in connection.execute(statement))
        kept = [item for item in best if item[0] in existing]
        if len(kept) >= limit or len(best) < asked:
            return kept[:limit]
        asked *= 4


def _postings(
    connection: Connection, row: Any, stem: str, through: int, members: NDArray[np.int64]
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]] | None:
    """A word's documents (positions in ``members``) with its counts: kept, else read now."""
    import numpy as np

    if row is not None and int(row[1]) == through:
        positions = np.frombuffer(row[2], dtype="<u4")
        counts_blob = row[3]
        width = len(counts_blob) // (2 * len(positions)) if len(positions) else 2
        counts = np.frombuffer(counts_blob, dtype="<u2" if width == 2 else "<u4")
        return positions.astype(np.int64), counts[: len(positions)], counts[len(positions) :]
    return _read_counts(connection, stem, through, members)


def _current(connection: Connection, catalog: Catalog) -> bool:
    """Whether ``catalog`` holds the documents this transaction sees (``_catalog``'s
    signature: their number, the highest row id, the vectors' generation)."""
    return index_signature(connection) == catalog.signature[:-1]


def _statistics(connection: Connection) -> tuple[int, float] | None:
    """FTS5's BM25 statistics: the rows and the average length in tokens (its averages
    record: the rows, then each column's tokens), as ``fts5Bm25GetData`` computes them."""
    values = fts5_averages(connection)
    if values is None or len(values) < 2 or values[0] <= 0:
        return None
    return values[0], float(sum(values[1:])) / float(values[0])


_alive_of: tuple[Any, Any, Any] | None = None
_alive_lock = threading.Lock()


def _alive(catalog: Catalog, members: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Whether each of ``members`` is a document of ``catalog``; kept for the same catalog
    and members."""
    import numpy as np

    global _alive_of
    row_ids = catalog.row_ids
    with _alive_lock:
        if (
            _alive_of is not None
            and _alive_of[0]() is row_ids
            and np.array_equal(_alive_of[1], members)
        ):
            return _alive_of[2]  # type: ignore[no-any-return]
    if not len(row_ids):
        alive = np.zeros(len(members), dtype=bool)
    else:
        at = np.minimum(np.searchsorted(row_ids, members), len(row_ids) - 1)
        alive = row_ids[at] == members
    with _alive_lock:
        _alive_of = (weakref.ref(row_ids), members, alive)
    return alive


_TABLE = 256
"""Counts below this in body and in context are weighted from a table (``_weighted``)."""
_tables: dict[float, Any] = {}
_tables_lock = threading.Lock()


def _weighted(body: NDArray[Any], context: NDArray[Any], weight: float) -> NDArray[np.float64]:
    """Each document's weighted count as FTS5's BM25 sums it: one instance at a time, in
    the order of their positions (every body instance, 1.0 each, then every context
    instance, ``weight`` each). A sum of many 0.4s rounds differently from a product,
    so the sums are tabled for small counts and added one by one for the rest."""
    import numpy as np

    with _tables_lock:
        table = _tables.get(weight)
        if table is None:
            table = np.empty((_TABLE, _TABLE), dtype=np.float64)
            table[:, 0] = np.arange(_TABLE, dtype=np.float64)
            for count in range(1, _TABLE):
                table[:, count] = table[:, count - 1] + weight
            _tables[weight] = table
    body = body.astype(np.int64)
    context = context.astype(np.int64)
    small = (body < _TABLE) & (context < _TABLE)
    frequency = np.empty(len(body), dtype=np.float64)
    frequency[small] = table[body[small], context[small]]
    for index in np.flatnonzero(~small).tolist():
        total = float(body[index])
        for _ in range(int(context[index])):
            total += weight
        frequency[index] = total
    return frequency


def _best(
    scores: NDArray[np.float64], members: NDArray[np.int64], limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` highest positive scores as (row id of ``members``, score), ties by row
    id (``members`` ascend)."""
    import numpy as np

    held = np.flatnonzero(scores)
    if len(held) > limit:
        cut = np.partition(scores[held], len(held) - limit)[len(held) - limit]
        held = held[scores[held] >= cut]
    order = np.lexsort((held, -scores[held]))[:limit]
    chosen = held[order]
    return list(zip(members[chosen].tolist(), scores[chosen].tolist(), strict=True))


# -- a query's words as FTS5 stems them ----------------------------------------------------

_stems: dict[str, str | None] = {}
_stemmer: sqlite3.Connection | None = None
_stem_lock = threading.Lock()
STEMS_KEPT = 4_096


def _stem(word: str) -> str | None:
    """``word`` as ``search_fts`` indexes it (``TOKENIZE``, by the same SQLite library, on a
    private in-memory table); None unless it is exactly one token."""
    global _stemmer
    with _stem_lock:
        if word in _stems:
            return _stems[word]
        if _stemmer is None:
            _stemmer = sqlite3.connect(":memory:", check_same_thread=False)
            _stemmer.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize='{TOKENIZE}')")
            _stemmer.execute("CREATE VIRTUAL TABLE tokens USING fts5vocab(words, 'instance')")
        with _stemmer:
            _stemmer.execute("DELETE FROM words")
            _stemmer.execute("INSERT INTO words (rowid, word) VALUES (1, ?)", (word,))
            tokens = [str(row[0]) for row in _stemmer.execute("SELECT term FROM tokens")]
        stem = tokens[0] if len(tokens) == 1 else None
        if len(_stems) >= STEMS_KEPT:
            _stems.clear()
        _stems[word] = stem
        return stem
