"""Pausing Python's cyclic garbage collector over a bounded burst of allocation.

A review batch or a publish allocates hundreds of thousands of small objects (rows, facts,
views) that reference counting frees; the cyclic collector, triggered by the allocation
count alone, meanwhile walks the whole heap again and again, and that walk was about a
sixth of a large review's CPU. Pausing it over one such burst, and letting it resume after,
changes no result: objects in a cycle are only collected a little later.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; on as before afterwards.

    Nested uses are harmless: only the outermost one that found it on turns it back on.
    Use it for bounded work (one batch, one publish), never around a wait.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


_long_lived = False


def mark_long_lived() -> None:
    """This process keeps what it loads for as long as it runs (``proctor serve``):
    ``freeze_what_lives`` then freezes it."""
    global _long_lived
    _long_lived = True


def freeze_what_lives() -> None:
    """In a process ``mark_long_lived`` marked, collect, then ``gc.freeze()`` what is alive
    (elsewhere nothing): for code that has just loaded something the process keeps (the
    modules a router imports on its first request, a held search catalog), so that later
    full collections need not walk it again. Each walked the server's whole heap, 25–55 ms
    of one request's time on the 1 GB bench store; what is frozen is still freed by
    reference counting when it goes, only cycles among it stay."""
    if _long_lived:
        gc.collect()
        gc.freeze()
