"""One lock per key: work on different keys runs at once, work on one key in turn.

Live intake holds the locks of the conversations a request touches, so two appends to one
conversation never race for the same place while appends to other conversations go on.
A key's lock exists only while someone holds or waits for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class KeyedLocks:
    """Locks made on demand per key and dropped when nobody needs them."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def holding(self, keys: Iterable[str]) -> Iterator[None]:
        """Hold the lock of every key in ``keys`` for the block (taken in sorted order,
        so two holders of overlapping key sets never deadlock)."""
        ordered = sorted(set(keys))
        with self._guard:
            for key in ordered:
                lock, users = self._locks.get(key, (None, 0))
                self._locks[key] = (lock or threading.Lock(), users + 1)
            locks = [self._locks[key][0] for key in ordered]
        taken: list[threading.Lock] = []
        try:
            for lock in locks:
                lock.acquire()
                taken.append(lock)
            yield
        finally:
            for lock in reversed(taken):
                lock.release()
            with self._guard:
                for key in ordered:
                    lock, users = self._locks[key]
                    if users == 1:
                        del self._locks[key]
                    else:
                        self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        """How many keys are held or waited for now."""
        with self._guard:
            return len(self._locks)
