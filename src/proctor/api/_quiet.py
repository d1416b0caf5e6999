"""Background work the server hosts waits for a quiet moment in its requests.

``proctor serve`` runs background work (the heartbeat's passes, webhook delivery) in the
interpreter that answers its requests. While such a thread runs Python — the imports of its
first pass, a poll of the store — a request waiting for the interpreter lock waits up to the
switch interval (5 ms) at each of its turns: a gate hook, asked once per agent tool call,
took 20-50 ms instead of 5 while the heartbeat's and the webhook thread's first imports ran.
That work can wait a moment; the hook cannot. So it starts when no request is in flight and
none ended in the last ``QUIET_SECONDS``, or after ``LONGEST_WAIT_SECONDS`` at the latest:
a server that is never quiet still runs it.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

QUIET_SECONDS = 0.2
"""How long no request must have been answered (and none be in flight) to be quiet."""

LONGEST_WAIT_SECONDS = 10.0
"""The longest background work waits for quiet before it runs anyway."""


class RequestActivity:
    """When the app last answered a request, and how many it is answering now.

    ``begin``/``end`` run on the event loop (``RequestActivityMiddleware``); background
    threads only read, in ``wait_quiet``.
    """

    def __init__(self) -> None:
        self._in_flight = 0
        self._last_end = time.monotonic()
        self._closed = threading.Event()

    def begin(self) -> None:
        """A request came in."""
        self._in_flight += 1

    def end(self) -> None:
        """A request was answered (or failed)."""
        self._in_flight -= 1
        self._last_end = time.monotonic()

    @property
    def in_flight(self) -> int:
        """Requests being answered now."""
        return self._in_flight

    def quiet_for(self, span: float) -> bool:
        """No request in flight and none answered in the last ``span`` seconds."""
        return not self._in_flight and time.monotonic() - self._last_end >= span

    def close(self) -> None:
        """The app stops: waits end now, and later ones do not wait."""
        self._closed.set()

    def wait_quiet(
        self,
        *,
        stop: threading.Event | None = None,
        quiet: float = QUIET_SECONDS,
        longest: float = LONGEST_WAIT_SECONDS,
    ) -> bool:
        """Wait until the requests are quiet (or ``longest`` seconds passed); False when
        ``stop`` was set or the app closed meanwhile."""
        deadline = time.monotonic() + longest
        while True:
            if self._closed.is_set() or (stop is not None and stop.is_set()):
                return False
            now = time.monotonic()
            if now >= deadline:
                return True
            still = quiet if self._in_flight else self._last_end + quiet - now
            if still <= 0:
                return True
            # Woken at most every ``quiet`` seconds (a wake takes the lock from a request);
            # the caller's ``stop`` is seen at the next wake.
            self._closed.wait(min(still, deadline - now))


class RequestActivityMiddleware:
    """Counts the HTTP requests in flight and notes when the last one ended."""

    def __init__(self, app: ASGIApp, activity: RequestActivity) -> None:
        self.app = app
        self.activity = activity

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.activity.begin()
        ended = False

        async def send_noting_streams(message: Message) -> None:
            # An event stream (the UI's notifications) stays open as long as a page is:
            # counted, it would keep the server from ever being quiet.
            nonlocal ended
            if message["type"] == "http.response.start" and _is_event_stream(message):
                ended = True
                self.activity.end()
            await send(message)

        try:
            await self.app(scope, receive, send_noting_streams)
        finally:
            if not ended:
                self.activity.end()


def _is_event_stream(start: Message) -> bool:
    """The response that ``start`` begins is a server-sent event stream."""
    for name, value in start.get("headers", ()):
        if name.lower() == b"content-type":
            return bytes(value).lower().startswith(b"text/event-stream")
    return False
