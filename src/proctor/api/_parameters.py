"""Query strings and paths with a NUL character are refused before any route runs.

No stored text holds a NUL (intake and import replace it), so a parameter with one can
match nothing; SQLite would answer "nothing found" and PostgreSQL refuses the statement
("text fields cannot contain NUL"), which reached the client as a 500. One ASGI layer
answers 400 with the parameter's name on both backends instead.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send


def nul_refusal(path: str, query_string: bytes) -> str | None:
    """The sentence refusing a request whose path or query holds NUL, or ``None``."""
    if "\x00" in path:
        return "The path holds a NUL character (%00), which no stored id or name has: remove it."
    if b"\x00" not in query_string and b"%00" not in query_string.lower():
        return None
    for name, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            shown = name.replace("\x00", "%00")
            return (
                f"The query parameter {shown!r} holds a NUL character (%00), which no stored "
                "text has: remove it."
            )
    return None


class NulParameters:
    """Answers 400 to a request with NUL in its path or query parameters (any method)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        sentence = nul_refusal(scope.get("path", ""), scope.get("query_string", b""))
        if sentence is None:
            await self._app(scope, receive, send)
            return
        body = json.dumps({"detail": sentence}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
