"""Approximate nearest vectors for large scopes: sign codes, Hamming distance, exact rescoring.

Scoring every vector of a scope costs a multiplication of 384 floats per document, read
from 1.5 KB: at 300,000 documents a search spends half a second there. Above
``EXACT_BELOW`` vectors in scope a search instead

1. compares the query's *code* with every document's: the signs of the 384 components,
   48 bytes (binary quantisation; the Hamming distance between two codes estimates the
   angle between the vectors, ``π · distance / 384``);
2. takes the ``RESCORED`` documents of smallest Hamming distance and rescores them with the
   exact cosine similarity of their float vectors; the ranking uses those;
3. takes the ``EXTREMES`` documents of largest Hamming distance and rescores them too.

The hybrid ranking min-max normalises the similarity over the scope. Here *low* and *high*
are the lowest and highest exact similarity among the rescored documents (the nearest and
the farthest by code, plus whatever else the ranking rescored): the most similar document
of the scope is among the nearest codes and the least similar among the farthest, unless
sign codes misjudge it badly, and then the range found is a little narrower than the
scope's. Below ``EXACT_BELOW`` (a conversation, LoCoMo's scopes) every vector is compared
exactly, as before.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proctor.search._encoder import DIMENSIONS

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EXACT_BELOW = 32_768
"""Vectors in scope below which every one is compared exactly (the approximate path above)."""
RESCORED = 4_096
"""Nearest documents by code rescored with their exact similarity."""
EXTREMES = 1_024
"""Farthest documents by code rescored, for the low end of the normalisation's range."""
CODE_BYTES = DIMENSIONS // 8
"""Bytes of a code: one bit per dimension (48)."""
GATHERED = 1_024
"""Vectors gathered at once by ``similarities`` (1.5 MB: they stay in the cache). A power of
two, so every block but the last is a whole number of the BLAS kernel's groups of rows."""


WHOLE = 64
"""``whole_similarities`` multiplies a multiple of this many rows at a time: a multiple of
every BLAS kernel's group of rows (as ``GATHERED`` is)."""


def codes_of(vectors: NDArray[np.float32]) -> NDArray[np.uint8]:
    """Sign codes of the rows of ``vectors``: bit set where the component is positive."""
    import numpy as np

    return np.packbits(vectors > 0, axis=-1)


def words_of(codes: NDArray[np.uint8]) -> NDArray[np.uint64]:
    """Codes as held for comparing: six rows of 64-bit words, one column per document
    (each row's Hamming distances are then a pass over one contiguous array)."""
    import numpy as np

    return np.ascontiguousarray(np.ascontiguousarray(codes).view(np.uint64).T)


def hamming(words: NDArray[np.uint64], code: NDArray[np.uint8]) -> NDArray[np.uint16]:
    """The Hamming distance of each document of ``words`` (``words_of``) to ``code``."""
    import numpy as np

    query = np.ascontiguousarray(code).view(np.uint64)
    distances: NDArray[np.uint16] = np.bitwise_count(words[0] ^ query[0]).astype(np.uint16)
    for row in range(1, len(query)):
        distances += np.bitwise_count(words[row] ^ query[row])
    return distances


def similarities(
    vectors: NDArray[np.float32], rows: NDArray[np.int64], query: NDArray[np.float32]
) -> NDArray[np.float32]:
    """``vectors[rows] @ query``, the same floats, gathered ``GATHERED`` rows at a time.

    Rescoring gathers 6,000–30,000 rows of 1.5 KB scattered over the held copy: copied all
    at once they leave the cache before the product reads them again (about a third of
    the cost). Each block starts at a multiple of ``GATHERED``, so BLAS on one thread (the
    ranking's, ``_one_thread.py``) takes its rows in the same groups as one product would; a last row alone goes with the block before it
    (numpy computes a one-row product another way). ``tests/search/test_vectors_binary.py``
    holds the floats equal bit for bit.
    """
    import numpy as np

    count = len(rows)
    if count <= GATHERED + 1:
        found: NDArray[np.float32] = vectors[rows] @ query
        return found
    found = np.empty(count, dtype=np.result_type(vectors, query))
    starts = list(range(0, count, GATHERED))
    if count - starts[-1] == 1:
        starts.pop()
    for start, end in zip(starts, [*starts[1:], count], strict=True):
        found[start:end] = vectors[rows[start:end]] @ query
    return found


def whole_similarities(
    vectors: NDArray[np.float32], rows: NDArray[np.int64], query: NDArray[np.float32]
) -> NDArray[np.float32]:
    """``vectors[rows] @ query`` as a product gives every row but its last few: BLAS
    computes the rows of a product in groups (four on this machine's OpenBLAS), and the
    last rows that do not fill a group another way (a rounding apart). Here every block
    is ``GATHERED`` rows, a last one filled up to a multiple of ``WHOLE`` rows with copies
    of its first row (dropped), so no row is among a product's last: each row's value is
    then the same in any product where it is not (``tests/search/test_vectors_binary.py``).
    What ``completed_similarities`` reuses."""
    import numpy as np

    count = len(rows)
    found = np.empty(count, dtype=np.result_type(vectors, query))
    for start in range(0, count, GATHERED):
        block = rows[start : start + GATHERED]
        short = -len(block) % WHOLE
        if short:
            filled = np.concatenate([block, np.full(short, block[0])])
            found[start:] = (vectors[filled] @ query)[: len(block)]
        else:
            found[start : start + len(block)] = vectors[block] @ query
    return found


def completed_similarities(
    vectors: NDArray[np.float32],
    rows: NDArray[np.int64],
    query: NDArray[np.float32],
    known_rows: NDArray[np.int64],
    known: NDArray[np.float32],
) -> NDArray[np.float32]:
    """``similarities(vectors, rows, query)``, the same floats, reusing ``known``: the
    ``whole_similarities`` of ``known_rows`` (ascending), computed earlier (while the full
    text ranks, ``_query._Semantic``). Every block of ``similarities`` but its last is
    whole ``GATHERED`` rows, so a row there has its whole value: taken from ``known`` or
    computed the same way; the last block is multiplied as ``similarities`` multiplies it."""
    import numpy as np

    count = len(rows)
    if count <= GATHERED + 1 or not len(known_rows):
        return similarities(vectors, rows, query)
    starts = list(range(0, count, GATHERED))
    if count - starts[-1] == 1:
        starts.pop()
    last = starts[-1]
    found = np.empty(count, dtype=np.result_type(vectors, query))
    found[last:] = vectors[rows[last:]] @ query
    head = rows[:last]
    at = np.minimum(np.searchsorted(known_rows, head), len(known_rows) - 1)
    held = known_rows[at] == head
    found[:last][held] = known[at[held]]
    missing = np.flatnonzero(~held)
    if len(missing):
        found[missing] = whole_similarities(vectors, head[missing], query)
    return found


def extremes(
    distances: NDArray[np.uint16],
    usable: NDArray[np.bool_] | None = None,
    near: int = RESCORED,
    far: int = EXTREMES,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Indexes of the nearest (at least ``near``) and the farthest (at least ``far``) of the
    ``usable`` documents by ``distances``, each in index order: every document as near as
    the ``near``-th nearest is taken (ties are not broken by chance), and likewise far."""
    import numpy as np

    if usable is not None and usable.all():  # the usual case: skip copying by the mask
        usable = None
    counts = np.bincount(distances if usable is None else distances[usable], minlength=1)
    below = np.cumsum(counts)
    nearest_at = int(np.searchsorted(below, min(near, int(below[-1]))))
    above = np.cumsum(counts[::-1])
    farthest_at = len(counts) - 1 - int(np.searchsorted(above, min(far, int(above[-1]))))
    chosen = distances <= nearest_at
    distant = distances >= farthest_at
    if usable is not None:
        chosen &= usable
        distant &= usable
    return np.flatnonzero(chosen), np.flatnonzero(distant)


@dataclass(slots=True)
class _Held:
    row_ids: weakref.ref[Any]
    vectors: weakref.ref[Any]
    has_vector: NDArray[np.bool_]
    codes: NDArray[np.uint8]
    words: NDArray[np.uint64]


_held: dict[int, _Held] = {}
_holding = threading.Lock()


def held_codes(
    row_ids: NDArray[np.int64], vectors: NDArray[np.float32], has_vector: NDArray[np.bool_]
) -> NDArray[np.uint64]:
    """The codes (``words_of``) of an in-memory copy of the index (``_catalog.py``), kept with it.

    Computed once per copy; when the copy was brought up to date by adding vectors to the
    same documents (the background embedder's work: the same ``row_ids`` array, new
    ``vectors``), only the rows that gained a vector are coded again.
    """
    with _holding:
        for key in [key for key, held in _held.items() if held.row_ids() is None]:
            del _held[key]
        held = _held.get(id(row_ids))
        if held is not None and held.row_ids() is row_ids:
            if held.vectors() is not vectors:
                gained = has_vector & ~held.has_vector
                codes = held.codes.copy()
                codes[gained] = codes_of(vectors[gained])
                held.vectors, held.has_vector = weakref.ref(vectors), has_vector.copy()
                held.codes, held.words = codes, words_of(codes)
            return held.words
        codes = codes_of(vectors)
        words = words_of(codes)
        _held[id(row_ids)] = _Held(
            weakref.ref(row_ids), weakref.ref(vectors), has_vector.copy(), codes, words
        )
        return words
