"""Compact JSON text for tool answers (times as ISO 8601)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def dumps(value: Any) -> str:
    """``value`` as compact JSON text."""
    return orjson.dumps(value, default=_default).decode()
