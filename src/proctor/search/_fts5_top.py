"""FTS5's best matches by BM25 without scoring every match of the query's common words.

Ranking ``a OR b OR c`` makes FTS5 compute BM25 for every document holding any of the
words: about a microsecond each, so a question of common words ("read the config file":
110,000 of 311,000 documents) costs 130 ms however few matches are kept. Most of those
documents hold one common word and cannot reach the best ``limit``. This finds the same
best ``limit`` while scoring far fewer, exactly:

- BM25 is a sum over the query's words, each term ``idf · f·(k1 + 1) / (f + K)`` with
  ``K > 0``: a word adds less than ``U = idf · (k1 + 1)`` to any document, so a document
  holding exactly the words ``T`` scores below ``U(T)``, the sum of their bounds
  (``idf`` as FTS5 computes it: ``fts5_idf``; the document frequencies are counted, once per
  version of the data: ``_unchanged.py``).
- The documents holding a rarer word ``p`` with a commoner one (and no rarer word) are
  ``p AND (the commoner ones) NOT (the rarer ones)``, and those holding one word alone
  ``p NOT (the others)``: these groups split the matches (``_groups``). Each names every
  word once, the words a document holds in the query's order (or an order that adds them
  the same way), so FTS5 gives each document the very score the full query gives it (the
  same phrases, IDFs and frequencies; the words it lacks add 0.0), bit for bit, and
  scores only the group's documents.
- The groups are ranked in turn, the rarest word's first. Once the ``limit``-th best score
  found is above the bound of every document not ranked yet, no document left can reach
  the best ``limit``: they are the exhaustive ranking's, with its scores. The first group
  holds the sets of words of highest bound (for three words ``{p0 p1 p2}``, ``{p0 p1}``,
  ``{p0 p2}``), which ranked one set at a time took three statements, each paying FTS5's
  IDFs (a count of every word's documents) and its ``NOT``: "read the config file" on the
  1 GB store 46–56 ms of CPU, as one group 27–29 ms.

A question with one word, more than ``MAX_WORDS`` words or fewer than ``EXHAUSTIVE_BELOW``
matches in all, and a search whose groups have not settled after ``MAX_SETS`` of them, is
ranked exhaustively (the same answer: never slower than that by more than those groups).
Ties at the ``limit``-th score may be broken differently (the exhaustive ranking breaks
them arbitrarily; this by row id). ``tests/search/test_fts5_top.py`` holds the two equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import text
from sqlalchemy.engine import Connection

from proctor.search._unchanged import unless_changed

Ranked = Sequence[Sequence[Any]]
"""Rows of (row id, BM25 score, higher = better, anything else), best first."""
Rank = Callable[[str], Ranked]
"""Runs the ranked statement for an FTS5 expression: its best matches (at most the
``limit`` of ``best_matches``), scored by ``-bm25`` of that expression."""

K1 = 1.2
"""FTS5's BM25 k1 (``fts5_aux.c``)."""
MAX_WORDS = 3
"""Above this many words a group's words could be added in another order than the
query's (a rounding apart), and on the 1 GB store questions of four to six common words
needed 10–28 sets of words, as slow as one exhaustive ranking or slower."""
MAX_SETS = 4
"""Groups ranked before the search gives up and ranks every match (two- and three-word
questions of the 1 GB store settle after the first)."""
EXHAUSTIVE_BELOW = 20_000
"""Documents matching any word (at most: the sum of the words' frequencies) below which
one exhaustive ranking costs little (about 20 ms) and is used."""
_MARGIN = 1e-9
"""Relative slack on the bounds' comparison (they are sums of floats)."""


def or_expression(terms: Sequence[str]) -> str:
    """FTS5's expression for documents holding any of ``terms``."""
    return " OR ".join(f'"{term}"' for term in terms)


def and_expression(terms: Sequence[str], without: Sequence[str] = ()) -> str:
    """FTS5's expression for documents holding all of ``terms`` and none of ``without``."""
    holding = " AND ".join(f'"{term}"' for term in terms)
    return f"{holding} NOT ({or_expression(without)})" if without else holding


def best_matches(
    connection: Connection,
    terms: Sequence[str],
    rank: Rank,
    limit: int,
    *,
    exhaustive_below: int | None = None,
    max_sets: int | None = None,
    rank_all: Rank | None = None,
) -> Ranked:
    """The best ``limit`` documents holding any of ``terms`` by FTS5's BM25 over all of
    them, as ``rank(or_expression(terms))`` gives them (up to ties at the last score; with
    the rows ``rank`` gives them: each document's row from the set that scored it best).
    ``exhaustive_below`` and ``max_sets``: as ``EXHAUSTIVE_BELOW`` and ``MAX_SETS``.
    ``rank_all``, when given, ranks instead of ``rank`` when every match is ranked at
    once (the same documents and scores; its rows may say more)."""
    everything = rank if rank_all is None else rank_all
    if len(terms) < 2 or len(terms) > MAX_WORDS:
        return everything(or_expression(terms))
    below = EXHAUSTIVE_BELOW if exhaustive_below is None else exhaustive_below
    rows = indexed_rows(connection)
    if rows is None or rows < below:  # no more matches than documents
        return everything(or_expression(terms))
    frequencies = [_frequency(connection, term) for term in terms]
    if sum(frequencies) < below:
        return everything(or_expression(terms))
    bounds = [fts5_idf(rows, n) * (K1 + 1) for n in frequencies]
    best: dict[int, Sequence[Any]] = {}
    groups = _groups(terms, frequencies, bounds)
    for done, (expression, bound) in enumerate(groups):
        if done == (MAX_SETS if max_sets is None else max_sets):
            return everything(or_expression(terms))
        for row in rank(expression):
            kept = best.get(int(row[0]))
            if kept is None or row[1] > kept[1]:
                best[int(row[0])] = row
        ranked = sorted(best.values(), key=lambda row: (-row[1], row[0]))[:limit]
        if bound is None or (len(ranked) == limit and ranked[-1][1] > bound * (1 + _MARGIN)):
            return ranked
    return sorted(best.values(), key=lambda row: (-row[1], row[0]))[:limit]


def _groups(
    terms: Sequence[str], frequencies: Sequence[int], bounds: Sequence[float]
) -> list[tuple[str, float | None]]:
    """The expressions ranked in turn, each with the bound of every document none of them
    so far holds (None: none is left), for the words some document holds, rarest first
    (``p0, p1, …``):

    - ``p0 AND (p1 OR p2 …)``, then ``p1 AND (p2 …) NOT p0``, …: the documents holding a
      rarer word with a commoner one. What is left holds one of the words alone or only
      commoner ones: it scores below ``max(U(p0), U(p(k+1)) + …)``. These are the sets of
      words of highest bound (for three words, ``{p0 p1 p2}``, ``{p0 p1}``, ``{p0 p2}``:
      one statement where each set alone was one, each paying FTS5's IDFs: the count of
      every word's documents);
    - then each word alone, ``p NOT (the others)``, below ``U(p)``.

    Each word is in each expression once, and the words a document holds come in the
    query's order (FTS5 adds the words' scores in the expression's order: a sum of three
    in another order may round differently; the words it lacks add 0.0), so a document's
    score is the full query's, bit for bit.
    """
    held = sorted((i for i in range(len(terms)) if frequencies[i]), key=lambda i: -bounds[i])
    groups: list[tuple[str, float | None]] = []
    for k, head in enumerate(held[:-1]):
        commoner = sorted(held[k + 1 :])
        rarer = sorted(held[:k])
        if head < commoner[0]:  # the head first, the others in the query's order
            holding = f'"{terms[head]}" AND ({or_expression([terms[i] for i in commoner])})'
        elif head > commoner[-1]:
            holding = f'({or_expression([terms[i] for i in commoner])}) AND "{terms[head]}"'
        else:  # between them: only the first two a document holds are added in another
            # order, and a + b == b + a (MAX_WORDS is 3)
            holding = f'"{terms[head]}" AND ({or_expression([terms[i] for i in commoner])})'
        if rarer:
            holding = f"({holding}) NOT ({or_expression([terms[i] for i in rarer])})"
        left = max(bounds[held[0]], sum(bounds[i] for i in held[k + 1 :]))
        groups.append((holding, left))
    for j, word in enumerate(held):
        others = [terms[i] for i in sorted(held) if i != word]
        after = bounds[held[j + 1]] if j + 1 < len(held) else None
        groups.append((and_expression([terms[word]], others), after))
    return groups


def fts5_idf(rows: int, frequency: int) -> float:
    """FTS5's BM25 inverse document frequency (``fts5_aux.c``: never below 1e-6)."""
    idf = math.log((rows - frequency + 0.5) / (frequency + 0.5))
    return idf if idf > 0 else 1e-6


SAMPLE_EVERY = 16
"""The row ids of a word's documents kept with its count are those divisible by this
(``TermRows.sample``)."""


class TermRows(NamedTuple):
    """A word's documents: how many (as FTS5 counts them for its IDF), and the row ids of
    those whose row id is divisible by ``SAMPLE_EVERY``, ascending: a sample chosen by row
    id alone, so the samples of two words intersect as their documents do."""

    frequency: int
    sample: tuple[int, ...]


_TERM_ROWS = text(
    "SELECT count(*), group_concat(CASE WHEN rowid % :every = 0 THEN rowid END) "
    "FROM search_fts WHERE search_fts MATCH :match"
)
"""One pass over a word's documents for both (FTS5 gives them in row id order; the
sample costs about nothing beside the count)."""


def term_rows(connection: Connection, term: str) -> TermRows:
    """``term``'s ``TermRows``, counted once per version of the data."""

    def counted() -> TermRows:
        row = connection.execute(_TERM_ROWS, {"match": f'"{term}"', "every": SAMPLE_EVERY}).one()
        listed = str(row[1]) if row[1] is not None else ""
        return TermRows(
            int(row[0]), tuple(sorted(int(value) for value in listed.split(",") if value))
        )

    return unless_changed(connection, ("fts5 term rows", term), counted)


def _frequency(connection: Connection, term: str) -> int:
    """Documents holding ``term`` (as FTS5 counts them for its IDF)."""
    return term_rows(connection, term).frequency


def indexed_rows(connection: Connection) -> int | None:
    """The rows FTS5's BM25 counts (the first number of its averages record): every
    document of the index (its triggers keep the two in step, in the same transaction),
    read without counting them; None when that record cannot be read."""
    values = fts5_averages(connection)
    return None if values is None else values[0]


_AVERAGES = text("SELECT block FROM search_fts_data WHERE id = 1")


def fts5_averages(connection: Connection) -> list[int] | None:
    """FTS5's averages record (row 1 of ``search_fts_data``: BM25's statistics), read now
    (``averages_of``)."""
    return averages_of(connection.execute(_AVERAGES).scalar_one_or_none())


def averages_of(block: object) -> list[int] | None:
    """An averages record decoded: the rows, then each column's tokens; None when
    ``block`` is not one."""
    if not isinstance(block, bytes) or not block:
        return None
    return varints(block) or None


def varints(data: bytes) -> list[int]:
    """The SQLite variable-length integers of ``data`` (FTS5's records: ``docsize``, each
    column's tokens; the averages record, the rows and then each column's tokens). A ninth
    byte holds eight bits of its integer."""
    values: list[int] = []
    value = length = 0
    for byte in data:
        if length == 8:
            values.append((value << 8) | byte)
            value = length = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        length += 1
        if not byte & 0x80:
            values.append(value)
            value = length = 0
    return values
