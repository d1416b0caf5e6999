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

The count is set through OpenBLAS itself, not threadpoolctl's ``set_num_threads``: from
threadpoolctl 3.8 that call takes effect only in the first thread that made it while that
thread lives, and does nothing in any other. A search's helper thread lives as long as the
process, so once it had set the count first, every block of every other thread ran on all
the cores (seen in CI: a block's products computed on two threads).
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
                import numpy  # noqa: F401  (loads its BLAS: only loaded libraries are found)
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _blas = False
            else:  # finds the loaded BLAS: once
                _blas = ThreadpoolController().select(user_api="blas").lib_controllers
        if _blas is not False:
            if _inside == 0:
                _saved = [library.num_threads for library in _blas]
                for library in _blas:
                    _set_threads(library, 1)
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
                    _set_threads(library, count)


def _set_threads(library: Any, count: int) -> None:
    """The library's thread count set from whichever thread this is: OpenBLAS's own setter
    where threadpoolctl has one (``_real_set_num_threads``, 3.8 and later: its public
    ``set_num_threads`` does nothing outside the thread that first called it), the public
    one otherwise (earlier versions, and BLIS or MKL, whose counts are not owned)."""
    getattr(library, "_real_set_num_threads", library.set_num_threads)(count)
