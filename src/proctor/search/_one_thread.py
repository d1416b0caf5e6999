"""Numpy's BLAS on one thread: while the sentence encoder runs, and while a search ranks
from the held catalog.

The ranking multiplies a few thousand vectors by the query: under a millisecond of work.
OpenBLAS hands it to every core and its threads then spin, waiting for more: 8 ms of CPU
for 0.8 ms of work per product, about 40 ms a search on the 1 GB store (and wall time
too, when the cores are busy with other requests). One thread computes the same values.
The encoder runs on one thread by design (a second core is left to the rest of Proctor).

BLAS's thread count is one setting for the whole process, and several threads rank and
encode at once (a server's requests, its background embedder, a search's own helper
thread): the limit is set when the first of them enters and given back when the last one
leaves, so no block ever runs with the threads another block's end gave back (a product
split between threads may round a vector's last rows another way).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_blas: Any = None
"""threadpoolctl's controllers of the loaded BLAS libraries (found once), False without it."""
_creating = threading.Lock()
_inside = 0
"""Blocks running now (guarded by ``_creating``)."""
_saved: list[int] = []
"""Each library's thread count before the first block began."""


@contextmanager
def blas_on_one_thread() -> Iterator[None]:
    """BLAS limited to one thread inside the block, and until every block that overlaps it
    has ended (nothing changes without threadpoolctl, the ``embeddings`` extra's). Each
    library's count is set directly (microseconds; threadpoolctl's ``limit`` takes about
    0.15 ms, a search enters two blocks)."""
    global _blas, _inside, _saved
    with _creating:
        if _blas is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _blas = False
            else:  # finds the loaded BLAS: once
                _blas = ThreadpoolController().select(user_api="blas").lib_controllers
        if _blas is not False:
            if _inside == 0:
                _saved = [library.num_threads for library in _blas]
                for library in _blas:
                    library.set_num_threads(1)
            _inside += 1
    if _blas is False:
        yield
        return
    try:
        yield
    finally:
        with _creating:
            _inside -= 1
            if _inside == 0:
                for library, count in zip(_blas, _saved, strict=True):
                    library.set_num_threads(count)
