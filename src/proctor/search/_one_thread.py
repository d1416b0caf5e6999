"""Numpy's BLAS on one thread: while the sentence encoder runs, and while a search ranks
from the held catalog.

The ranking multiplies a few thousand vectors by the query: under a millisecond of work.
OpenBLAS hands it to every core and its threads then spin, waiting for more: 8 ms of CPU
for 0.8 ms of work per product, about 40 ms a search on the 1 GB store (and wall time
too, when the cores are busy with other requests). One thread computes the same values.
The encoder runs on one thread by design (a second core is left to the rest of Proctor).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_controller: Any = None
_creating = threading.Lock()


@contextmanager
def blas_on_one_thread() -> Iterator[None]:
    """BLAS limited to one thread inside the block (nothing changes without threadpoolctl,
    the ``embeddings`` extra's)."""
    global _controller
    with _creating:
        if _controller is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _controller = False
            else:
                _controller = ThreadpoolController()  # finds the loaded BLAS: once
    if _controller is False:
        yield
        return
    with _controller.limit(limits=1, user_api="blas"):
        yield
