"""Ranking: full text and sentence embeddings fused into one list, with source references.

Each document in scope gets

    fused = w · bm25 / max(bm25) + (1 − w) · minmax(cosine)
    score = ρ · fused + β · max(fused of the turn before, fused of the turn after)
                      + δ · [the query names the document's author]

where bm25 ranks the document's own text and date at full weight and the neighbouring
turns at 0.4 (BM25F column weights), min-max runs over the documents in scope, and ρ is
0.8 for a document that ends by asking a question, else 1 (``_asking.py``). Full text
alone (no ``embeddings`` extra) uses the same formula with w = 1. Generic choices, the
weights picked on two LoCoMo development conversations and checked on the other three
(``proctor eval locomo``; docs/search.md has the figures):

- normalised scores, weighted, instead of reciprocal-rank fusion: RRF throws away how
  far ahead the best full-text match is, and measured worse than full text alone;
- the turns around a message count (β): an answer is often split over a question and
  its reply;
- a query that names a person favours what that person wrote (δ): "What did Melanie
  paint?" is answered by Melanie's turns, not by the turns addressed to her; and the
  query is embedded without the names of the authors it names (``embedded_query``), so
  its vector is about what is asked, not about everyone who mentions that person.

In hybrid mode the vectors are queried where they live (``_vectors.py``: sqlite-vec in
SQL, or a streaming scan): the ``SEMANTIC_CANDIDATES`` nearest documents in scope and the
range of similarity over the scope come back, nothing else is held. The candidates (the
full-text matches, the nearest documents, and the turns around each) are scored by the
formula above; a document outside them has neither a word of the query nor a vector near
it, so it cannot outrank them (``tests/search/test_vectors.py`` holds the hits equal to
scoring every document). A long-running process that asked for it (``hold_vectors``: the
background indexer's store) scores every document from an in-memory copy of the index
instead (``_catalog.py``): milliseconds per query on 100,000 documents, for 1.5 KB each
held. A document without a vector yet (embedding runs in the background) is scored as in
full-text mode, w = 1. Full-text mode scores the full-text matches.
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from operator import itemgetter
from typing import Any, Literal, NamedTuple, cast

from sqlalchemy import (
    Select,
    and_,
    case,
    desc,
    func,
    literal_column,
    or_,
    select,
    text,
    true,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.sql.elements import ColumnElement

from proctor._util.clock import utcnow
from proctor.errors import NotFoundError
from proctor.search._asking import ASKING_SHARE, BLANKS, asking_share, asks_column
from proctor.search._binary import (
    EXACT_BELOW,
    EXTREMES,
    RESCORED,
    codes_of,
    completed_similarities,
    extremes,
    hamming,
    held_codes,
    similarities,
    whole_similarities,
)
from proctor.search._catalog import Catalog, holds_vectors, load_catalog
from proctor.search._documents import SourceRef
from proctor.search._embed import count_embedded
from proctor.search._encoder import TextEncoder, missing_embeddings
from proctor.search._fts5_top import (
    EXHAUSTIVE_BELOW,
    TermRows,
    best_matches,
    term_rows,
    varints,
)
from proctor.search._index import freshness
from proctor.search._one_thread import blas_on_one_thread
from proctor.search._postings import may_rank as may_rank_by_postings
from proctor.search._postings import ranked as postings_ranked
from proctor.search._spare import spare_core
from proctor.search._status import IndexStatus
from proctor.search._temporal import RERANK_DEPTH, TimeWindow, asks_when, named_window, time_bonus
from proctor.search._vectors import Scope, nearest, scope_filters, vectors_of
from proctor.search._write import IN_CLAUSE, Encoder, chunks, resolve_encoder
from proctor.store import ReadStore
from proctor.store import tables as t

FULL_TEXT_WEIGHT = 0.5
"""w: the full-text share of the fused score (the embedding has the rest)."""
NEIGHBOUR_WEIGHT = 0.5
"""β: how much the better of the two neighbouring turns adds."""
AUTHOR_WEIGHT = 0.3
"""δ: added when the query names the document's author."""
CONTEXT_WEIGHT = 0.4
"""Full-text weight of a message's neighbouring turns relative to its own text (BM25F
column weight on SQLite; PostgreSQL's ``ts_rank`` gives weight B 0.4 of weight A)."""
POSTGRES_VECTOR = "search_vector"
"""PostgreSQL's stored, GIN-indexed tsvector of a document: its own text weighted A, its
neighbouring turns B (migration 0010)."""
CANDIDATES = 1_000
"""Full-text matches ranked per query (the best ones by BM25)."""
SEMANTIC_CANDIDATES = 256
"""Nearest documents by embedding read per query (in-database ranking)."""
EXCERPT_CHARS = 200

Mode = Literal["hybrid", "full_text"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def query_terms(query: str) -> list[str]:
    """The words of a query that carry meaning: lower case, no stop words, each once."""
    words = (w.lower() for w in _WORD.findall(query))
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in _STOPWORDS))


@lru_cache(maxsize=4096)
def _names(author: str | None) -> frozenset[str]:
    """The words of an author's name. Kept per name: ranking asks it of every candidate
    (hundreds per query), and a store has few authors."""
    return frozenset(query_terms(author)) if author else frozenset()


def embedded_query(query: str, matches: Sequence[_Match], terms: Sequence[str]) -> str:
    """The query as the sentence encoder reads it: without the names of authors it names.

    Who a question is about is the author signal's part (δ); left in the text, a name
    pulls the query's vector towards every turn that mentions or addresses that person
    ("Way to go, Jon!") and away from what is asked about. The authors are those of the
    full-text matches (a name in the query matches its author's turns, whose body starts
    with it). A query that is nothing but names is read as it is.
    """
    known: set[str] = set()
    for author in {match.author for match in matches}:  # a thousand matches, few authors
        known |= _names(author)
    named = [term for term in terms if term in known]
    if not named:
        return query
    pattern = r"\b(?:" + "|".join(re.escape(n) for n in named) + r")(?:['’]s)?\b"
    left = " ".join(re.sub(pattern, " ", query, flags=re.IGNORECASE).split())
    return left if _WORD.search(left) else query


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked document with where it comes from."""

    rank: int
    score: float
    doc_type: str
    doc_id: str
    title: str | None
    author: str | None
    excerpt: str
    occurred_at: datetime | None
    conversation_id: str | None
    project: str | None
    source_refs: tuple[SourceRef, ...]
    full_text: float
    """The document's own full-text score, normalised to 0–1 (0: no word matched)."""
    similarity: float | None
    """Cosine similarity of query and document (None in full-text mode)."""

    def as_json(self) -> dict[str, Any]:
        """The hit as ``proctor search --json`` prints it."""
        return {
            "rank": self.rank,
            "score": round(self.score, 6),
            "type": self.doc_type,
            "id": self.doc_id,
            "title": self.title,
            "author": self.author,
            "excerpt": self.excerpt,
            "occurred_at": self.occurred_at.isoformat() if self.occurred_at else None,
            "conversation_id": self.conversation_id,
            "project": self.project,
            "source_refs": [ref.as_json() for ref in self.source_refs],
            "full_text": round(self.full_text, 6),
            "similarity": None if self.similarity is None else round(self.similarity, 6),
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits, best first, how they were ranked, and how complete the index was."""

    query: str
    mode: Mode
    note: str | None
    """Why the search ran on full text only (what to install), when it did."""
    hits: tuple[SearchHit, ...]
    index: IndexStatus
    """The index searched: documents, how many embedded, whether hits may be stale."""

    def as_json(self) -> dict[str, Any]:
        """The result as ``proctor search --json`` prints it."""
        return {
            "query": self.query,
            "mode": self.mode,
            "note": self.note,
            "index": self.index.as_json(),
            "hits": [hit.as_json() for hit in self.hits],
        }


class _Match(NamedTuple):
    """A full-text match: a search makes a thousand (a tuple is made in a fifth of the time
    a frozen dataclass is)."""

    row_id: int
    score: float
    conversation_id: str | None
    position: int | None
    author: str | None
    asks: bool = False
    """The document ends by asking a question (``_asking.py``)."""


def search(
    store: ReadStore,
    query: str,
    *,
    project: str | None = None,
    conversation_id: str | None = None,
    doc_types: Sequence[str] | None = None,
    limit: int = 10,
    encoder: Encoder = "auto",
    now: datetime | None = None,
) -> SearchResult:
    """Rank the indexed documents for ``query``.

    Args:
        store: a store whose index ``index_sources`` keeps up to date.
        query: words or a question.
        project: only this project's documents (by name).
        conversation_id: only this conversation's documents.
        doc_types: only these types (``message``, ``tool_call``, ``entity``, …).
        limit: how many hits.
        encoder: the sentence encoder, None for full text only, ``"auto"`` for the model
            when it is installed.
        now: the time relative words of the query ("last week") are read against; the
            current time when not given.
    """
    chosen = resolve_encoder(encoder)
    terms = query_terms(query)
    when = asks_when(query)
    window = named_window(query, now or utcnow())
    final_limit = limit
    if when or window is not None:
        limit = max(limit, RERANK_DEPTH)  # the time signals may reorder the best ones
    # Full text is one connection (one transaction) for the whole search: each one more is
    # a BEGIN and a ROLLBACK, two round trips on PostgreSQL. With embeddings, no connection
    # is held while the query is embedded (CPU) or the held catalog is read (connections of
    # its own): a thread holding one while it asks the pool for another waits for the
    # others, and a busy server's threads then wait for each other (tests/api/test_load.py).
    # The held catalog is read first: it places the full-text matches.
    catalog = load_catalog(store, chosen) if chosen is not None and holds_vectors(store) else None
    with store.repos.search.read() as connection:
        scope = Scope(
            project_id=_project_id(connection, project) if project is not None else None,
            conversation_id=conversation_id,
            doc_types=tuple(doc_types) if doc_types else None,
        )
        # The held ranking's part that needs no full-text match runs meanwhile, on a helper
        # thread (SQLite and numpy let go of the interpreter while they work).
        early = (
            _start_semantic(catalog, chosen, query, terms, scope)
            if catalog is not None and chosen is not None
            else None
        )
        matches = _full_text(connection, terms, scope, catalog) if terms else []
        # The documents are counted here unless the catalog counts them.
        fresh = freshness(connection, count_documents=catalog is None)
        current = not fresh.behind
        best = max((m.score for m in matches), default=0.0)
        own = {m.row_id: m.score / best for m in matches} if best > 0 else {}
        if chosen is None:
            ranked = _rank_full_text(matches, terms, limit)
            status = IndexStatus(
                documents=fresh.documents or 0, embedded=None, full_text_current=current
            )
            hits = _finish(connection, ranked, own, {}, terms, when, window, final_limit)
            note = missing_embeddings() or "embeddings turned off"
            return SearchResult(
                query=query, mode="full_text", note=note, hits=tuple(hits), index=status
            )
    sentence = embedded_query(query, matches, terms)
    if catalog is not None:
        with blas_on_one_thread():
            ranked, similarity = _rank_hybrid(
                catalog,
                chosen,
                sentence,
                matches,
                terms,
                scope,
                limit,
                prepared=_semantic_of(early, sentence),
            )
        status = IndexStatus(
            documents=catalog.documents, embedded=catalog.embedded, full_text_current=current
        )
        with store.repos.search.read() as connection:
            hits = _finish(connection, ranked, own, similarity, terms, when, window, final_limit)
    else:
        vector = query_vector(chosen, sentence)
        with store.repos.search.read() as connection:
            ranked, similarity, in_scope = _rank_in_database(
                connection, chosen.name, vector, matches, terms, scope, limit
            )
            # Unscoped, the vector query counted every vector of the model already.
            whole = scope == Scope(None, None, None)
            status = IndexStatus(
                documents=fresh.documents or 0,
                embedded=in_scope if whole else count_embedded(connection, chosen.name),
                full_text_current=current,
            )
            hits = _finish(connection, ranked, own, similarity, terms, when, window, final_limit)
    return SearchResult(query=query, mode="hybrid", note=None, hits=tuple(hits), index=status)


def _finish(
    connection: Connection,
    ranked: Sequence[tuple[int, float]],
    own: dict[int, float],
    similarity: dict[int, float],
    terms: Sequence[str],
    when: bool,
    window: TimeWindow | None,
    limit: int,
) -> list[SearchHit]:
    """The best ``limit`` of ``ranked`` (reordered by the query's time signals) as hits."""
    if when or window is not None:
        ranked = _rerank_for_time(connection, ranked, when, window)
    return _hits(connection, ranked[:limit], own, similarity, terms)


QUERY_VECTORS = 256
"""Query embeddings kept per encoder (the last ones asked): a repeated query (the next
page, the same search again, another filter) is not embedded again."""

_query_vectors: weakref.WeakKeyDictionary[Any, OrderedDict[str, Any]] = weakref.WeakKeyDictionary()
_query_vectors_lock = threading.Lock()


def query_vector(encoder: TextEncoder, sentence: str) -> Any:
    """The encoder's (read-only) vector of ``sentence``, kept for the next time it is asked."""
    try:
        with _query_vectors_lock:
            kept = _query_vectors.setdefault(encoder, OrderedDict())
            if sentence in kept:
                kept.move_to_end(sentence)
                return kept[sentence]
    except TypeError:  # an encoder that cannot be weakly referenced: nothing is kept
        return encoder.encode([sentence])[0]
    vector = encoder.encode([sentence])[0].copy()
    vector.setflags(write=False)
    with _query_vectors_lock:
        kept[sentence] = vector
        while len(kept) > QUERY_VECTORS:
            kept.popitem(last=False)
    return vector


def _project_id(connection: Connection, name: str) -> str:
    found = connection.execute(
        select(t.projects.c.project_id).where(t.projects.c.name == name)
    ).scalar_one_or_none()
    if found is None:
        raise NotFoundError(f"no project called {name!r}; `proctor conversations list` shows them")
    return str(found)


# -- full text ---------------------------------------------------------------------------


def _full_text(
    connection: Connection, terms: Sequence[str], scope: Scope, catalog: Catalog | None = None
) -> list[_Match]:
    """The best full-text matches in scope (any of the terms), higher score = better. Where
    each sits (conversation, position, author, whether it asks) comes from ``catalog``
    when it holds the document, else from the index."""
    if connection.dialect.name == "sqlite":
        return _fts5(connection, terms, scope, catalog)
    return _tsvector(connection, terms, scope)


def _fts5(
    connection: Connection, terms: Sequence[str], scope: Scope, catalog: Catalog | None = None
) -> list[_Match]:
    """FTS5's best ``CANDIDATES`` matches by BM25. Over the whole index, ranked from the
    common words' postings where they can (``_by_postings``), else found without scoring
    every match of a common word where that gives the same ones (``_fts5_top.py``): there
    each set of words is ranked in the full-text index alone, without reading a document
    row, and only the best are looked up: in ``catalog`` (a held copy of the index), else
    in one statement (reading a match's document row costs about as much as scoring it:
    its text is read to see whether it asks; 6 ms for a set's 1,000 best). Without a
    catalog, a search ranked in one statement joins its best to their documents there. A
    scope filters the documents before the limit.

    The statements order by their result column (``ORDER BY score DESC``), not by a second
    ``bm25()`` call, which SQLite evaluated again for every match entering the best
    ``CANDIDATES`` ("git commit": 4,083 of 24,455; about 2 % of the statement, FTS5 keeps
    a row's instances). The same rows and numbers: ``score`` is ``0 - bm25`` either way,
    and ties keep the lower row id either way."""
    bm25 = f"bm25(search_fts, 1.0, {CONTEXT_WEIGHT})"
    params: dict[str, Any] = {"blanks": BLANKS}
    whole = scope == Scope(None, None, None)
    if whole:
        ranked = text(
            f"SELECT rowid, -{bm25} AS score FROM search_fts WHERE search_fts MATCH :match "
            f"ORDER BY score DESC LIMIT {CANDIDATES}"
        )
        joined = text(
            "SELECT d.row_id, f.score, d.conversation_id, d.position, d.author, "
            "rtrim(d.text, :blanks) LIKE '%?' AS asks "
            f"FROM ({ranked.text}) AS f "
            "JOIN search_documents AS d ON d.row_id = f.rowid ORDER BY f.score DESC"
        )
    else:
        filters, bound = scope_filters(scope)
        params |= bound
        ranked = joined = text(
            f"SELECT d.row_id, -{bm25} AS score, d.conversation_id, d.position, d.author, "
            "rtrim(d.text, :blanks) LIKE '%?' AS asks "
            "FROM search_fts JOIN search_documents AS d ON d.row_id = search_fts.rowid "
            f"WHERE search_fts MATCH :match {filters} "
            f"ORDER BY score DESC LIMIT {CANDIDATES}"
        )

    def ranking(statement: Any) -> Any:
        def rank(expression: str) -> list[Sequence[Any]]:
            bound = params | {"match": expression}
            return list(connection.execute(statement, bound).all())

        return rank

    if whole:
        kept = _by_postings(connection, terms, catalog)
        if kept is not None:
            return _placed_matches(connection, kept, catalog)
    split = _split_at(connection, terms, catalog) if whole else None
    rank = ranking(ranked) if split is None else _halves(connection, ranked.text, split)
    best = best_matches(
        connection,
        terms,
        rank,
        CANDIDATES,
        rank_all=ranking(joined) if catalog is None else rank,
    )
    if not best or len(best[0]) > 2:  # already with their documents' places
        return _matches_of(best)
    return _placed_matches(connection, [(int(row[0]), float(row[1])) for row in best], catalog)


def _by_postings(
    connection: Connection, terms: Sequence[str], catalog: Catalog | None
) -> list[tuple[int, float]] | None:
    """The best ``CANDIDATES`` matches ranked from the common words' postings
    (``_postings.py``: the same documents and scores, in numpy; "git commit" on the 1 GB
    store 4.3 ms of CPU against 33.3 ms in FTS5), where the query's words are held by at
    least ``EXHAUSTIVE_BELOW`` documents in all (below, FTS5 ranks in a few milliseconds)
    and the postings can rank them; else None."""
    if not may_rank_by_postings(connection):
        return None
    if sum(term_rows(connection, term).frequency for term in terms) < EXHAUSTIVE_BELOW:
        return None
    return postings_ranked(connection, terms, CANDIDATES, CONTEXT_WEIGHT, catalog)


SPLIT_FROM = 20_000
"""Documents holding a word of the query (at most: the sum of the words' document
frequencies) from which the held ranking's full text is ranked in two halves by row id, the
upper one on a helper thread where a core is idle (``_halves``). Below, a ranking costs a
few milliseconds, less than handing half of it over."""


def _split_at(connection: Connection, terms: Sequence[str], catalog: Catalog | None) -> int | None:
    """The row id where the full-text ranking of ``terms`` over the whole index is split in
    two (``_balanced``, else ``_middle``), or None: not split (no catalog, few matches,
    no helper, no idle core)."""
    if catalog is None or not HELPERS or len(catalog.row_ids) < 2 or not terms:
        return None
    if connection.dialect.name != "sqlite":
        return None
    rows = [term_rows(connection, term) for term in terms]
    if sum(row.frequency for row in rows) < SPLIT_FROM:
        return None
    if not _spare_core():
        return None
    balanced = _balanced(rows)
    return balanced if balanced is not None else _middle(connection, catalog)


BALANCE_SAMPLE = 32
"""Sampled documents (``TermRows.sample``) below which ``_balanced`` does not place the
split."""


def _balanced(rows: Sequence[TermRows]) -> int | None:
    """The row id with half of the query's first ranked set of documents below it, by the
    words' samples: the documents holding the rarest word with another
    (``_fts5_top._groups``: the set that is ranked first, and on the 1 GB store the only
    one for two- and three-word questions), else those holding any. Each half of the
    ranking then scores about as many matches, where a split for every query alike left
    15,173 of "git commit"'s 24,455 above it (25 against 16 ms) and 1,580 of "failing
    test"'s 4,564. None when the sample is too small to tell (``BALANCE_SAMPLE``)."""
    held = sorted((row for row in rows if row.frequency), key=lambda row: row.frequency)
    if not held:
        return None
    anywhere = set().union(*(row.sample for row in held))
    first = set(held[0].sample) & set().union(*(row.sample for row in held[1:]))
    chosen = sorted(first if len(first) >= BALANCE_SAMPLE else anywhere)
    if len(chosen) < BALANCE_SAMPLE:
        return None
    return chosen[len(chosen) // 2]


SPLIT_SAMPLE = 64
"""Every this many-th document's length is read to place the split (``_middle``)."""
_middle_of: tuple[Any, int] | None = None
"""The last split placed: a weak reference to the catalog's row ids, and the row id."""
_middle_lock = threading.Lock()


def _middle(connection: Connection, catalog: Catalog) -> int:
    """The row id that splits the index's full-text work about in half: where half of the
    documents' weight lies below, each document weighing the square root of its length in
    tokens (FTS5's ``docsize``; a word's matches spread about so: the distinct words of a
    text grow about as the square root of its length, Heaps' law), read for every
    ``SPLIT_SAMPLE``-th row id. Kept while the catalog holds the same documents (its row
    ids: new vectors keep them). On the 1 GB bench store: row id 210,624 of 311,165, where
    the middle document (155,584) left three quarters of a common word's matches above it
    (graph objects come first, tool calls with long outputs last); the middle document
    where the lengths cannot be read."""
    global _middle_of
    rows = catalog.row_ids
    with _middle_lock:
        if _middle_of is not None and _middle_of[0]() is rows:
            return _middle_of[1]
    middle = int(rows[len(rows) // 2])
    try:
        sampled = connection.execute(
            text(f"SELECT id, sz FROM search_fts_docsize WHERE id % {SPLIT_SAMPLE} = 0 ORDER BY id")
        ).all()
    except SQLAlchemyError:  # no lengths kept: the middle document
        sampled = []
    weights = [(int(row_id), math.sqrt(sum(varints(bytes(sizes))))) for row_id, sizes in sampled]
    total = sum(weight for _, weight in weights)
    below = 0.0
    for row_id, weight in weights:
        below += weight
        if total > 0 and below >= total / 2:
            middle = row_id
            break
    with _middle_lock:
        _middle_of = (weakref.ref(rows), middle)
    return middle


_FTS_STATE = text("SELECT id, block FROM search_fts_data WHERE id IN (1, 10) ORDER BY id")
"""FTS5's averages record (rows and tokens: BM25's statistics) and structure record (its
segments and a counter raised by every write): equal in two transactions, they see the
same full-text index."""


def _fts_state(connection: Connection) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in connection.execute(_FTS_STATE).all()]


def _halves(connection: Connection, ranked: str, split: int) -> Any:
    """A ``Rank`` (``_fts5_top.py``) that ranks the documents below row id ``split`` on
    ``connection`` and those from ``split`` on a helper thread, on a connection of its own,
    meanwhile (SQLite lets go of the interpreter while it ranks), and merges the two.

    The same rows and scores as one statement: BM25's statistics (rows, average lengths,
    each word's documents) are the whole index's whatever the row ids asked for, each half
    keeps its best ``CANDIDATES``, and ties keep the lower row id either way (SQLite's
    sorter keeps rows in the order FTS5 gives them, by row id). The helper's connection
    must see the same full-text index as ``connection`` (``_FTS_STATE``): a write between
    the two transactions makes the caller rank that half itself, as it does when every
    helper is busy (the task cancelled before it began)."""
    prefix, order = ranked.split(" ORDER BY ", 1)
    lower = text(f"{prefix} AND rowid < :split ORDER BY {order}")
    upper = text(f"{prefix} AND rowid >= :split ORDER BY {order}")
    engine = connection.engine
    seen: list[list[tuple[Any, ...]]] = []

    def upper_half(bound: dict[str, Any]) -> tuple[list[tuple[Any, ...]], list[Any]] | None:
        try:
            with engine.connect() as other:
                return _fts_state(other), list(other.execute(upper, bound).all())
        except SQLAlchemyError:  # the caller ranks it (and reports what fails there)
            return None

    def rank(expression: str) -> list[Sequence[Any]]:
        bound = {"match": expression, "split": split}
        # At most HELPERS callers wait for a helper, each holding one connection while the
        # helper takes another: within the pool (two kept, four more), so never a deadlock.
        started = _helper_pool().submit(upper_half, bound)
        rows: list[Sequence[Any]] = list(connection.execute(lower, bound).all())
        if not seen:
            seen.append(_fts_state(connection))
        made = None if started.cancel() else started.result()
        if made is not None and made[0] == seen[0]:
            rows += made[1]
        else:  # not begun (every helper busy), failed, or another version of the index
            rows += connection.execute(upper, bound).all()
        rows.sort(key=lambda row: (-row[1], row[0]))
        return rows[:CANDIDATES]

    return rank


def _placed_matches(
    connection: Connection, scored: Sequence[tuple[int, float]], catalog: Catalog | None
) -> list[_Match]:
    """Matches of these (row id, score), in this order, with where each document sits:
    from ``catalog`` where it holds it, else read (a document gone since is left out)."""
    places: dict[int, tuple[str | None, int | None, str | None, bool]] = {}
    if catalog is not None:
        found_at = [(row_id, catalog.index_of.get(row_id)) for row_id, _ in scored]
        held = [(row_id, index) for row_id, index in found_at if index is not None]
        rows = catalog.rows
        asks = rows.asks[[index for _, index in held]].tolist() if held else []
        for (row_id, index), asking in zip(held, asks, strict=True):
            places[row_id] = (
                rows.conversations[index],
                rows.positions[index],
                rows.authors[index],
                asking,
            )
    unknown = [row_id for row_id, _ in scored if row_id not in places]
    d = t.search_documents
    for part in chunks(sorted(unknown), IN_CLAUSE):
        found = connection.execute(
            select(d.c.row_id, d.c.conversation_id, d.c.position, d.c.author, asks_column(d)).where(
                d.c.row_id.in_(list(part))
            )
        ).all()
        for row_id, conversation_id, position, author, asking in found:
            places[row_id] = (conversation_id, position, author, bool(asking))
    return [_Match(row_id, score, *places[row_id]) for row_id, score in scored if row_id in places]


def _tsvector(connection: Connection, terms: Sequence[str], scope: Scope) -> list[_Match]:
    """PostgreSQL: each term's ``ts_rank`` (length-normalised) weighted by its BM25 inverse
    document frequency in scope, summed.

    ``ts_rank`` alone counts every query word alike, so the common words of a question
    outvote the rare one that names what it asks about; FTS5's BM25 weighs them by rarity,
    and so does this (on LoCoMo, evidence recall@10 0.745 → 0.777 in full-text mode).

    One statement: the scope's counts (documents, and documents with each term) are a
    one-row CTE the ranking reads, so a search costs one round trip here, not two; a term
    no document in scope has adds nothing (its ``ts_rank`` is not computed).
    """
    d = t.search_documents
    vector: ColumnElement[Any] = literal_column(POSTGRES_VECTOR)
    english: ColumnElement[Any] = literal_column("'english'")
    per_term = [func.to_tsquery(english, term) for term in terms]
    counts: list[ColumnElement[int]] = [func.count().label("documents")]
    counts += [
        func.count().filter(vector.op("@@")(query)).label(f"frequency_{n}")
        for n, query in enumerate(per_term)
    ]
    counted = cast("Select[Any]", select(*counts).select_from(d))  # one count per term: any arity
    # Computed once (MATERIALIZED): inlined, PostgreSQL may join the aggregate as the inner
    # side of a nested loop and count the scope again for every match (seen on a fresh,
    # never-analysed database: 55 ms a search where 8 would do).
    statistics = _in_scope(counted, scope).cte("term_statistics").prefix_with("MATERIALIZED")
    documents = statistics.c.documents
    score: ColumnElement[Any] = literal_column("0.0")
    for n, query in enumerate(per_term):
        frequency = statistics.c[f"frequency_{n}"]
        weighted = _idf_sql(documents, frequency) * func.ts_rank(vector, query, 1)
        score = score + case((frequency > 0, weighted), else_=literal_column("0.0"))
    any_term = func.to_tsquery(english, " | ".join(terms))
    statement = (
        select(
            d.c.row_id,
            score.label("score"),
            d.c.conversation_id,
            d.c.position,
            d.c.author,
            asks_column(d).label("asks"),
        )
        .select_from(d.join(statistics, true()))
        .where(vector.op("@@")(any_term))
    )
    statement = _in_scope(statement, scope).order_by(desc("score")).limit(CANDIDATES)
    return _matches_of(connection.execute(statement).all())


def _matches_of(rows: Iterable[Any]) -> list[_Match]:
    """Full-text matches from their rows: row id, score, conversation, position, author,
    asks. A search makes hundreds: each tuple is made directly (``tuple.__new__``, what
    ``_Match``'s own constructor calls after binding its arguments), in half the time."""
    make = tuple.__new__
    return [make(_Match, (r[0], float(r[1]), r[2], r[3], r[4], bool(r[5]))) for r in rows]


def _in_scope(statement: Select[Any], scope: Scope) -> Select[Any]:
    d = t.search_documents
    if scope.project_id is not None:
        statement = statement.where(d.c.project_id == scope.project_id)
    if scope.conversation_id is not None:
        statement = statement.where(d.c.conversation_id == scope.conversation_id)
    if scope.doc_types:
        statement = statement.where(d.c.doc_type.in_(scope.doc_types))
    return statement


def _idf(documents: int, frequency: int) -> float:
    """BM25's inverse document frequency, as FTS5 computes it (never below zero)."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


_HALF: ColumnElement[float] = literal_column("0.5::float8")


def _idf_sql(documents: ColumnElement[Any], frequency: ColumnElement[Any]) -> ColumnElement[Any]:
    """``_idf`` in SQL, the same double-precision operations in the same order (PostgreSQL's
    ``ln`` and Python's ``math.log`` both call the C library's ``log``)."""
    share = (sql_cast(documents - frequency, DOUBLE_PRECISION) + _HALF) / (
        sql_cast(frequency, DOUBLE_PRECISION) + _HALF
    )
    return func.ln(literal_column("1.0::float8") + share)


def _rank_full_text(
    matches: Sequence[_Match], terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """(row id, score) of the best full-text matches, neighbours and authors counted.

    Every search without embeddings ranks its few hundred matches here, so the loop is
    kept plain: the author signal is worked out once per author (a store has few), and
    the order (score down, then row id up) comes from two sorts by a single key each: a
    stable sort by row id, then by score in reverse, which keeps tied scores in row id
    order (``tests/search``: the same hits as before)."""
    best = max((m.score for m in matches), default=0.0)
    if best <= 0:
        return []
    named = set(terms)
    fused = [m.score / best for m in matches]
    at: dict[tuple[str | None, int], float] = {
        (m.conversation_id, m.position): share
        for m, share in zip(matches, fused, strict=True)
        if m.conversation_id is not None and m.position is not None
    }
    beside = at.get
    authors: dict[str | None, float] = {}
    scored = []
    for (row_id, _, conversation_id, position, name, asks), share in zip(
        matches, fused, strict=True
    ):
        around = 0.0
        if position is not None:
            before = beside((conversation_id, position - 1), 0.0)
            after = beside((conversation_id, position + 1), 0.0)
            around = after if after > before else before  # max(before, after)
        author = authors.get(name)
        if author is None:
            author = authors[name] = AUTHOR_WEIGHT if _names(name) & named else 0.0
        own = share * (ASKING_SHARE if asks else 1.0)  # asking_share, inlined
        scored.append((row_id, own + NEIGHBOUR_WEIGHT * around + author))
    scored.sort(key=itemgetter(0))
    scored.sort(key=itemgetter(1), reverse=True)
    return scored[:limit]


# -- hybrid --------------------------------------------------------------------------------


def _rank_hybrid(
    catalog: Catalog,
    encoder: TextEncoder,
    sentence: str,
    matches: Sequence[_Match],
    terms: Sequence[str],
    scope: Scope,
    limit: int,
    *,
    exact_below: int | None = None,
    prepared: _Semantic | None = None,
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """(row id, score) of the best documents in scope, and each one's cosine similarity.

    With ``exact_below`` (``EXACT_BELOW`` when not given) vectors in scope or more, the
    similarities are those of the candidates the sign codes give (``_binary.py``),
    rescored exactly; a document outside them is ranked as the least similar one found.

    Only documents that can score above 0 are scored: those with a word of the query or
    an exact similarity (every usable one in scope below ``exact_below``; above, the
    rescored ones: any other is as far as the least similar found, its normalised
    similarity 0), the turns beside them and the documents of the authors the query
    names. Every other document in scope scores exactly 0 and comes, by row id, only
    after every document above 0: the ranking of scoring every document
    (``tests/search/test_rank_candidates.py``), in milliseconds on 300,000 documents.
    """
    import numpy as np

    count = len(catalog.row_ids)
    if prepared is None:  # not made while the full text ranked: made now
        prepared = _semantic(catalog, encoder, sentence, scope, exact_below, early=False)
    in_scope = prepared.in_scope
    if not in_scope.any():
        return [], {}
    found_at = [catalog.index_of.get(match.row_id) for match in matches]
    matched = np.array([i for i in found_at if i is not None], dtype=np.int64)
    lexical = np.array(
        [m.score for m, i in zip(matches, found_at, strict=True) if i is not None],
        dtype=np.float32,
    )
    positive = lexical != 0
    matched, lexical = matched[positive], lexical[positive]
    order = np.argsort(matched, kind="stable")
    matched, lexical = matched[order], lexical[order]
    scoped = in_scope[matched]
    best = lexical[scoped].max() if scoped.any() else np.float32(0.0)
    if best > 0:
        lexical = lexical / best
    query, usable = prepared.query, prepared.usable
    if prepared.approximate:
        rescored, found, low = _approximate_similarity(
            catalog, query, usable, matched, prepared if prepared.nearest is not None else None
        )
        ranged = found[usable[rescored]]
        high = max(ranged.max(), low) if len(ranged) else low
    else:
        rescored, found = prepared.rows, prepared.found
        low, high = (found.min(), found.max()) if len(found) else (0.0, 0.0)
    # Fused scores of every document that can have one above 0 (others stay 0). Sets of
    # documents are masks over the catalog: cheaper than sorting their indexes.
    support = _union(count, rescored, matched)
    semantic = np.zeros(len(support), dtype=np.float32)
    if high > low:
        at = np.searchsorted(support, rescored)
        semantic[at] = np.where(usable[rescored], (found - low) / (high - low), 0.0)
    own_text = np.zeros(len(support), dtype=np.float32)
    own_text[np.searchsorted(support, matched)] = lexical
    # A document not embedded yet is ranked by full text alone, as in full-text mode,
    # rather than as if it were unlike the query.
    fused = np.zeros(count, dtype=np.float32)
    fused[support] = np.where(
        catalog.has_vector[support] & in_scope[support],
        FULL_TEXT_WEIGHT * own_text + (1 - FULL_TEXT_WEIGHT) * semantic,
        np.where(in_scope[support], own_text, np.float32(0.0)),
    )
    named = set(terms)
    authors = [rows for author, rows in catalog.by_author.items() if _names(author) & named]
    beside = np.concatenate([catalog.before[support], catalog.after[support]])
    candidates = _union(count, support, beside[beside >= 0], *authors)
    candidates = candidates[in_scope[candidates]]
    before_index, after_index = catalog.before[candidates], catalog.after[candidates]
    before = np.where(before_index >= 0, fused[np.maximum(before_index, 0)], np.float32(0.0))
    after = np.where(after_index >= 0, fused[np.maximum(after_index, 0)], np.float32(0.0))
    own = fused[candidates]
    own = np.where(catalog.rows.asks[candidates], own * ASKING_SHARE, own)
    score = own + NEIGHBOUR_WEIGHT * np.maximum(before, after)
    for rows in authors:
        theirs = np.zeros(count, dtype=bool)
        theirs[rows] = True
        score[theirs[candidates]] += AUTHOR_WEIGHT
    take = min(limit, int(in_scope.sum()))
    ranking = np.lexsort((catalog.row_ids[candidates], -score))
    above = ranking[score[ranking] > 0][:take]
    top, top_scores = candidates[above], score[above]
    if len(top) < take:  # then documents scoring 0, by row id (the catalog's order)
        rest = np.flatnonzero(in_scope)
        rest = rest[~np.isin(rest, top)][: take - len(top)]
        top = np.concatenate([top, rest])
        top_scores = np.concatenate([top_scores, np.zeros(len(rest), dtype=np.float32)])
    ranked = [
        (int(row_id), float(value))
        for row_id, value in zip(catalog.row_ids[top], top_scores, strict=True)
    ]
    # The hits' own similarities, whether or not they were rescored.
    similarity = catalog.vectors[top] @ query
    return ranked, {
        int(row_id): float(value)
        for row_id, value in zip(catalog.row_ids[top], similarity, strict=True)
    }


def _union(count: int, *indexes: Any) -> Any:
    """The indexes (below ``count``) in any of ``indexes``, each once, in order."""
    import numpy as np

    chosen = np.zeros(count, dtype=bool)
    for part in indexes:
        chosen[part] = True
    return np.flatnonzero(chosen)


def _extremes_of(catalog: Catalog, query: Any, usable: Any) -> tuple[Any, Any]:
    """The nearest and the farthest ``usable`` documents by sign code (``extremes``)."""
    words = held_codes(catalog.row_ids, catalog.vectors, catalog.has_vector)
    return extremes(hamming(words, codes_of(query)), usable, RESCORED, EXTREMES)


class _Semantic(NamedTuple):
    """What the hybrid ranking computes without the full-text matches, so that it can be
    computed while they are ranked (``_start_semantic``)."""

    sentence: str
    """The query as embedded (``embedded_query``)."""
    query: Any
    """Its vector."""
    in_scope: Any
    usable: Any
    """In scope with a vector."""
    approximate: bool
    """Ranked by sign codes (``EXACT_BELOW`` usable documents or more)."""
    nearest: Any
    """Approximate, made early: the nearest documents by code (else None)."""
    farthest: Any
    rows: Any
    """Exact: every usable document; approximate, made early: the nearest, the farthest and
    the turns beside the nearest (with a vector), each with its ``whole_similarities``;
    approximate, made late: None."""
    found: Any
    """Their similarities."""


def _semantic(
    catalog: Catalog,
    encoder: TextEncoder,
    sentence: str,
    scope: Scope,
    exact_below: int | None,
    *,
    early: bool,
) -> _Semantic:
    """The ranking's part without the full-text matches: the scope, the query's vector
    and the similarities known before the matches: every usable document's below
    ``exact_below`` of them; above, when ``early``, the nearest and farthest by code and
    theirs (else ``_approximate_similarity`` finds those with the matches). An empty
    scope: no vector (nothing is ranked)."""
    import numpy as np

    in_scope = catalog.in_scope(scope)
    if not in_scope.any():
        none = np.zeros(0, dtype=np.int64)
        return _Semantic(sentence, None, in_scope, in_scope, False, None, None, none, none)
    query = query_vector(encoder, sentence)
    usable = in_scope & catalog.has_vector
    approximate = int(usable.sum()) >= (EXACT_BELOW if exact_below is None else exact_below)
    if not approximate:
        rows = np.flatnonzero(usable)
        found = similarities(catalog.vectors, rows, query)
        return _Semantic(sentence, query, in_scope, usable, False, None, None, rows, found)
    if not early:
        return _Semantic(sentence, query, in_scope, usable, True, None, None, None, None)
    nearest, farthest = _extremes_of(catalog, query, usable)
    beside = np.concatenate([catalog.before[nearest], catalog.after[nearest]])
    rows = _union(len(catalog.row_ids), nearest, farthest, beside[beside >= 0])
    rows = rows[catalog.has_vector[rows]]
    found = whole_similarities(catalog.vectors, rows, query)
    return _Semantic(sentence, query, in_scope, usable, True, nearest, farthest, rows, found)


HELPERS = 2
"""Threads that compute searches' ``_Semantic`` parts while their full text ranks (0: none,
every search makes its part after its matches: on the 1 GB store about 2–4 ms less CPU a
search, 3–6 ms more wall time on an idle machine)."""
_helpers: ThreadPoolExecutor | None = None
_helpers_lock = threading.Lock()


def _spare_core() -> bool:
    """Whether a core is likely idle for a helper (``_spare.py``: the CPU the machine's other
    processes used lately, this one's own left out). On a busy machine a helper has no core
    of its own: it only adds its CPU (about 4 % of a search's on the 1 GB store: the two
    threads slow each other, the last block of similarities is multiplied again), and the
    search may wait for its turn."""
    return spare_core()


def _start_semantic(
    catalog: Catalog, encoder: TextEncoder, query: str, terms: Sequence[str], scope: Scope
) -> Future[_Semantic] | None:
    """The ``_Semantic`` part of a search, started on a helper thread while the caller ranks
    the full text (on the 1 GB store 5–10 ms of the two run side by side: the sign codes,
    the nearest and farthest documents and their similarities, and a query not seen before
    embedded). None where there is nothing to overlap (no words to rank, no ``HELPERS``,
    no spare core: ``_spare_core``), or where the embedded sentence depends on the matches
    (a word of the query is a word of an author's name: ``embedded_query``)."""
    if not terms or not HELPERS or not _spare_core():
        return None
    named = set(terms)
    if any(_names(author) & named for author in catalog.by_author):
        return None
    return _helper_pool().submit(_early_semantic, catalog, encoder, query, scope)


def _helper_pool() -> ThreadPoolExecutor:
    """The searches' helper threads (``HELPERS`` of them, started on first use)."""
    global _helpers
    with _helpers_lock:
        if _helpers is None:
            _helpers = ThreadPoolExecutor(HELPERS, thread_name_prefix="proctor-search")
        return _helpers


def _early_semantic(
    catalog: Catalog, encoder: TextEncoder, sentence: str, scope: Scope
) -> _Semantic:
    with blas_on_one_thread():
        return _semantic(catalog, encoder, sentence, scope, None, early=True)


def _semantic_of(started: Future[_Semantic] | None, sentence: str) -> _Semantic | None:
    """The part ``_start_semantic`` started, if it was made for ``sentence``; None when it
    was not started, or has not begun (every helper busy: cancelled, made by the caller)."""
    if started is None or started.cancel():
        return None
    made = started.result()
    return made if made.sentence == sentence else None


def _approximate_similarity(
    catalog: Catalog, query: Any, usable: Any, lexical_rows: Any, early: _Semantic | None = None
) -> tuple[Any, Any, Any]:
    """The documents whose similarity to ``query`` the approximate path computes exactly,
    in index order, those similarities, and the one every other document is ranked with.

    Exact for the nearest and the farthest usable documents by sign code, the full-text
    matches and the turns around those and the nearest (those with a vector); every other
    document is given the lowest of those over ``usable`` (its min-max normalised
    similarity is then 0). With ``early`` (made while the full text ranked): its nearest
    and farthest, and its similarities where it has them (the same floats)."""
    import numpy as np

    if early is None:
        nearest, farthest = _extremes_of(catalog, query, usable)
    else:
        nearest, farthest = early.nearest, early.farthest
    around = np.concatenate([nearest, lexical_rows])
    wanted = np.concatenate(
        [nearest, farthest, lexical_rows, catalog.before[around], catalog.after[around]]
    )
    chosen = _union(len(catalog.row_ids), wanted[wanted >= 0])
    chosen = chosen[catalog.has_vector[chosen]]
    if early is None:
        found = similarities(catalog.vectors, chosen, query)
    else:
        found = completed_similarities(catalog.vectors, chosen, query, early.rows, early.found)
    ranged = usable[chosen]
    low = found[ranged].min() if ranged.any() else np.float32(0.0)
    return chosen, found, low


def _rank_in_database(
    connection: Connection,
    model: str,
    vector: Any,
    matches: Sequence[_Match],
    terms: Sequence[str],
    scope: Scope,
    limit: int,
    *,
    semantic_candidates: int = SEMANTIC_CANDIDATES,
    allow_extension: bool = True,
) -> tuple[list[tuple[int, float]], dict[int, float], int]:
    """(row id, score) of the best documents in scope, each one's cosine similarity, and
    how many documents in scope have a vector; from the candidates the database gives,
    by the same formula as ``_rank_hybrid``."""
    near = nearest(
        connection,
        vector,
        model,
        scope,
        semantic_candidates,
        allow_extension=allow_extension,
    )
    lexical_raw = {m.row_id: m.score for m in matches}
    best = max(lexical_raw.values(), default=0.0)
    lexical = {row_id: score / best for row_id, score in lexical_raw.items()} if best > 0 else {}
    core = set(lexical_raw) | {row_id for row_id, _ in near.top}
    if not core:
        return [], {}, near.scanned
    # Candidates themselves stay in scope (they came from scoped queries). The nearest
    # documents that are not full-text matches come back with their neighbours; the
    # full-text matches say where they sit (one without a place has no neighbours); only
    # the rest (nearest documents without a place) are read.
    matched = {m.row_id: m for m in matches}
    documents = _neighbours(connection, (row_id for row_id in core if row_id not in matched), scope)
    # A full-text match with a place is itself known: only the turns around it are read,
    # each place once (the join above would read a place once for each turn beside it).
    around: set[tuple[str, int]] = set()
    for m in matches:
        if m.conversation_id is not None and m.position is not None:
            documents.setdefault(
                m.row_id, _Place(m.conversation_id, m.position, m.author, True, m.asks)
            )
            around.update(
                {(m.conversation_id, m.position - 1), (m.conversation_id, m.position + 1)}
            )
    for row_id, beside in _at_places(connection, around, scope).items():
        documents.setdefault(row_id, beside)
    unplaced: set[int] = set()
    for row_id in core:
        place = documents.get(row_id)
        if place is not None:
            if not place.in_scope:
                documents[row_id] = _Place(
                    place.conversation_id, place.position, place.author, True, place.asks
                )
        elif row_id in matched:
            m = matched[row_id]
            documents[row_id] = _Place(m.conversation_id, m.position, m.author, True, m.asks)
        else:
            unplaced.add(row_id)
    documents |= _placed(connection, unplaced)
    similarity = dict(near.top)
    missing = [row_id for row_id in documents if row_id not in similarity]
    for row_id, stored in vectors_of(connection, missing, model).items():
        similarity[row_id] = float(stored @ vector)
    spread = near.high - near.low

    def fused(row_id: int) -> float:
        own = lexical.get(row_id, 0.0)
        if row_id not in similarity:  # not embedded yet: full text alone
            return own
        semantic = (similarity[row_id] - near.low) / spread if spread > 0 else 0.0
        return FULL_TEXT_WEIGHT * own + (1 - FULL_TEXT_WEIGHT) * semantic

    at: dict[tuple[str | None, int], int] = {
        (place.conversation_id, place.position): row_id
        for row_id, place in documents.items()
        if place.conversation_id is not None and place.position is not None
    }
    in_scope = {row_id for row_id, place in documents.items() if place.in_scope}
    value = {row_id: fused(row_id) if row_id in in_scope else 0.0 for row_id in documents}
    named = set(terms)
    scored: list[tuple[int, float]] = []
    for row_id in in_scope:
        place = documents[row_id]
        next_to = 0.0
        if place.position is not None:
            next_to = max(
                value.get(at.get((place.conversation_id, place.position - 1), -1), 0.0),
                value.get(at.get((place.conversation_id, place.position + 1), -1), 0.0),
            )
        author = AUTHOR_WEIGHT if _names(place.author) & named else 0.0
        own = value[row_id] * asking_share(place.asks)
        scored.append((row_id, own + NEIGHBOUR_WEIGHT * next_to + author))
    scored.sort(key=lambda item: (-item[1], item[0]))
    ranked = scored[:limit]
    chosen = {row_id: similarity[row_id] for row_id, _ in ranked if row_id in similarity}
    return ranked, chosen, near.scanned


@dataclass(frozen=True, slots=True)
class _Place:
    conversation_id: str | None
    position: int | None
    author: str | None
    in_scope: bool
    asks: bool = False


def _placed(connection: Connection, row_ids: set[int]) -> dict[int, _Place]:
    """Where these documents sit (all in scope: they came from scoped queries)."""
    d = t.search_documents
    found: dict[int, _Place] = {}
    for part in chunks(sorted(row_ids), IN_CLAUSE):
        for row in connection.execute(
            select(d.c.row_id, d.c.conversation_id, d.c.position, d.c.author, asks_column(d)).where(
                d.c.row_id.in_(list(part))
            )
        ):
            found[row.row_id] = _Place(
                row.conversation_id, row.position, row.author, True, bool(row[4])
            )
    return found


def _inside(
    scope: Scope, project_id: str | None, conversation_id: str | None, doc_type: str
) -> bool:
    return (
        (scope.project_id is None or project_id == scope.project_id)
        and (scope.conversation_id is None or conversation_id == scope.conversation_id)
        and (not scope.doc_types or doc_type in scope.doc_types)
    )


def _at_places(
    connection: Connection, places: set[tuple[str, int]], scope: Scope
) -> dict[int, _Place]:
    """The documents at these (conversation, position) places, marked in or out of scope."""
    d = t.search_documents
    found: dict[int, _Place] = {}
    for part in chunks(sorted(places), IN_CLAUSE):
        by_conversation: dict[str, list[int]] = {}
        for conversation_id, position in part:
            by_conversation.setdefault(conversation_id, []).append(position)
        condition = or_(
            *(
                and_(d.c.conversation_id == cid, d.c.position.in_(positions))
                for cid, positions in by_conversation.items()
            )
        )
        rows = connection.execute(
            select(
                d.c.row_id,
                d.c.conversation_id,
                d.c.position,
                d.c.author,
                d.c.project_id,
                d.c.doc_type,
                asks_column(d).label("asks"),
            ).where(condition)
        )
        for row_id, conversation_id, position, author, project_id, doc_type, asks in rows.all():
            inside = _inside(scope, project_id, conversation_id, doc_type)
            found[row_id] = _Place(conversation_id, position, author, inside, bool(asks))
    return found


def _neighbours(connection: Connection, row_ids: Iterable[int], scope: Scope) -> dict[int, _Place]:
    """The turns just before and after these documents (and the documents themselves),
    marked in or out of scope: one probe of (conversation_id, position) per document."""
    d = t.search_documents
    near = d.alias("near")
    found: dict[int, _Place] = {}
    for part in chunks(sorted(row_ids), IN_CLAUSE):
        rows = connection.execute(
            select(
                near.c.row_id,
                near.c.conversation_id,
                near.c.position,
                near.c.author,
                near.c.project_id,
                near.c.doc_type,
                asks_column(near).label("asks"),
            )
            .select_from(
                d.join(
                    near,
                    and_(
                        near.c.conversation_id == d.c.conversation_id,
                        near.c.position.between(d.c.position - 1, d.c.position + 1),
                    ),
                )
            )
            .where(d.c.row_id.in_(list(part)))
        )
        # Plain tuples fetched at once: a search reads thousands of these rows.
        for row_id, conversation_id, position, author, project_id, doc_type, asks in rows.all():
            inside = _inside(scope, project_id, conversation_id, doc_type)
            found[row_id] = _Place(conversation_id, position, author, inside, bool(asks))
    return found


# -- time ----------------------------------------------------------------------------------


def _rerank_for_time(
    connection: Connection,
    ranked: Sequence[tuple[int, float]],
    when: bool,
    window: TimeWindow | None,
) -> list[tuple[int, float]]:
    """The ranked documents with the time signals added (``_temporal.py``), best first."""
    if not ranked:
        return []
    d = t.search_documents
    rows = {
        row.row_id: row
        for row in connection.execute(
            select(d.c.row_id, d.c.text, d.c.occurred_at).where(
                d.c.row_id.in_([row_id for row_id, _ in ranked])
            )
        )
    }
    scored = [
        (
            row_id,
            score
            + (
                time_bonus(when, window, rows[row_id].text, rows[row_id].occurred_at)
                if row_id in rows
                else 0.0
            ),
        )
        for row_id, score in ranked
    ]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored


# -- hits ----------------------------------------------------------------------------------


def _hits(
    connection: Connection,
    ranked: Sequence[tuple[int, float]],
    own: dict[int, float],
    similarity: dict[int, float],
    terms: Sequence[str],
) -> list[SearchHit]:
    if not ranked:
        return []
    d, p = t.search_documents, t.projects
    rows = {
        row.row_id: row
        for row in connection.execute(
            # What a hit shows, not the full-text inputs (body, context) beside it.
            select(
                d.c.row_id,
                d.c.doc_type,
                d.c.doc_id,
                d.c.title,
                d.c.author,
                d.c.text,
                d.c.occurred_at,
                d.c.conversation_id,
                d.c.source_refs,
                p.c.name.label("project_name"),
            )
            .select_from(d.outerjoin(p, p.c.project_id == d.c.project_id))
            .where(d.c.row_id.in_([row_id for row_id, _ in ranked]))
        )
    }
    hits: list[SearchHit] = []
    for row_id, score in ranked:
        row = rows.get(row_id)
        if row is None:  # removed between ranking and reading
            continue
        hits.append(
            SearchHit(
                rank=len(hits) + 1,
                score=score,
                doc_type=row.doc_type,
                doc_id=row.doc_id,
                title=row.title,
                author=row.author,
                excerpt=excerpt(row.text, terms),
                occurred_at=row.occurred_at,
                conversation_id=row.conversation_id,
                project=row.project_name,
                source_refs=tuple(SourceRef.from_json(ref) for ref in row.source_refs),
                full_text=own.get(row_id, 0.0),
                similarity=similarity.get(row_id),
            )
        )
    return hits


def excerpt(body: str, terms: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """About ``width`` characters of ``body`` around the first query word found in it."""
    flat = " ".join(body.split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    found = [i for i in (lowered.find(term[:6]) for term in terms) if i >= 0]
    start = max(0, min(found) - width // 4) if found else 0
    piece = flat[start : start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")
