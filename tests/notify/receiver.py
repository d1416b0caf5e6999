"""A real webhook receiver on loopback: answers from a script, can hold requests, records them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """What the receiver got, and the switches a test turns."""

    def __init__(self, statuses: Sequence[int]) -> None:
        self.statuses = list(statuses)
        """Status answered to each request in turn; the last one repeats."""
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrived = threading.Event()
        """Set when a request arrived."""
        self.release = threading.Event()
        """Requests are answered only once this is set (set from the start unless held)."""
        self.release.set()
        self.url = ""

    def answer(self) -> int:
        """The status for the request that arrived last."""
        return self.statuses[min(len(self.bodies) - 1, len(self.statuses) - 1)]


@contextmanager
def receiving(statuses: Sequence[int] = (200,), *, hold: bool = False) -> Iterator[Receiver]:
    """A receiver on a free loopback port for the block; ``hold`` keeps requests waiting
    until the test sets ``release``."""
    receiver = Receiver(statuses)
    if hold:
        receiver.release.clear()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            receiver.bodies.append(json.loads(self.rfile.read(size)))
            receiver.headers.append(dict(self.headers.items()))
            receiver.arrived.set()
            receiver.release.wait(60)
            self.send_response(receiver.answer())
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/secret-token"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()
