"""The FIFO pool every supervisor model call waits in (SPEC MOD-4).

At most ``concurrency`` calls are in flight; the others wait and start in the order they
arrived. A finishing call hands its slot straight to the oldest waiter, so a newcomer
can never overtake the queue. The pool holds no event-loop state between calls: create
it anywhere and use it from one ``anyio.run`` per execution.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel


class ModelPool:
    """First in, first out: at most ``concurrency`` (1–4) model calls at once."""

    def __init__(self, concurrency: int = 1) -> None:
        if not 1 <= concurrency <= 4:
            raise ValueError(f"concurrency must be 1–4, not {concurrency}")
        self.concurrency = concurrency
        self._in_flight = 0
        self._waiting: deque[anyio.Event] = deque()

    @property
    def in_flight(self) -> int:
        """Calls holding a slot now."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """Calls queued for a slot now."""
        return len(self._waiting)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the body; waits in arrival order when all are taken."""
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._in_flight < self.concurrency and not self._waiting:
            self._in_flight += 1
            return
        turn = anyio.Event()
        self._waiting.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn in self._waiting:
                self._waiting.remove(turn)
            else:
                self._release()  # the slot was handed over just as we were cancelled: pass it on
            raise

    def _release(self) -> None:
        if self._waiting:
            self._waiting.popleft().set()  # the slot goes to the oldest waiter, still counted
        else:
            self._in_flight -= 1
