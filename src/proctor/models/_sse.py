"""Server-sent events decoded from a byte stream, as the streaming model APIs send them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event: its name (None when unnamed) and its data lines joined."""

    event: str | None
    data: str


class SseDecoder:
    """Turns arbitrary byte chunks into complete events (lines may split across chunks)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by ``chunk``."""
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        events: list[ServerSentEvent] = []
        for raw in lines:
            line = raw.removesuffix(b"\r").decode("utf-8", errors="replace")
            if not line:
                if self._data:
                    events.append(ServerSentEvent(self._event, "\n".join(self._data)))
                self._event, self._data = None, []
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                self._event = value
            elif field == "data":
                self._data.append(value)
        return events
