"""Tolerant coercion of Claude Code field values (times, counts, names).

Claude Code has no published schema and field types drift between versions, so every
value read from a record goes through one of these helpers instead of being trusted.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

_EPOCH_MS_THRESHOLD = 100_000_000_000
"""Numbers above this are epoch milliseconds, below it epoch seconds (year 5138 either way)."""

TITLE_CHARS = 80
_PLACEHOLDER = re.compile(r"^\[(image|document)[:\]]")
_IDE_CONTEXT = re.compile(r"<(ide_[a-z_]+)>[\s\S]*?</\1>")


def parse_time(value: Any) -> datetime | None:
    """A timezone-aware UTC datetime from an ISO string or epoch number, else None."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > _EPOCH_MS_THRESHOLD else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def as_int(value: Any) -> int | None:
    """An int field, or None when the value is missing or of another type."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def as_str(value: Any) -> str | None:
    """A non-empty string field, or None."""
    return value if isinstance(value, str) and value else None


def short_title(text: str) -> str:
    """The first line of ``text`` without IDE context tags, cut to a title-sized length."""
    if "<ide_" in text:
        text = _IDE_CONTEXT.sub("", text)
    lines = (line.strip() for line in text.strip().split("\n"))
    first = next((line for line in lines if line and not _PLACEHOLDER.match(line)), "")
    if len(first) <= TITLE_CHARS:
        return first
    return first[: TITLE_CHARS - 1].rstrip() + "…"


def basename(path: str) -> str | None:
    """The last component of a POSIX or Windows path (``/a/b`` and ``e:\\a\\b`` alike)."""
    trimmed = path.rstrip("/\\")
    name = trimmed.replace("\\", "/").rsplit("/", 1)[-1]
    return name or None
