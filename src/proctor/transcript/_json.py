"""The one rule for what JSON Proctor stores: any value JSON allows, held the same way
by SQLite and PostgreSQL and by the fingerprints.

Parsers and adapters hand over values that no store (or no encoder) takes as they are;
each is given one stable stored form here, so the same input gets the same stored value
and the same fingerprint on every backend:

- text: NUL characters (PostgreSQL text and JSONB refuse them) and lone UTF-16
  surrogates (not encodable as UTF-8) become U+FFFD; a surrogate pair written as two
  escapes becomes the one character it encodes;
- integers outside the signed 64-bit range (``0x8f3a…`` read by a Python literal
  parser, a 40-digit id) become their decimal text; non-finite floats (``NaN``,
  ``Infinity``) become the text ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
- object keys become text (``1`` → ``"1"``, ``true`` → ``"true"``), tuples lists;
- nesting is bounded: a record nested deeper than ``MAX_JSON_DEPTH`` levels is refused
  where it is read (``nesting_problem`` names the field); anything that still reaches
  storage deeper than ``MAX_STORED_DEPTH`` is cut there and marked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

MAX_JSON_DEPTH = 100
"""Objects and arrays one record may nest (JSON Lines line, document record, request line).

Real transcripts nest fewer than 30 levels; a deeper record is reported and skipped."""

MAX_STORED_DEPTH = 128
"""Deepest nesting a stored value keeps; deeper parts become ``TOO_DEEP`` (last defence:
adapters wrap record values in a few levels of their own, never this many)."""

TOO_DEEP = f"[nested deeper than {MAX_STORED_DEPTH} levels; not stored]"

REPLACEMENT = "\ufffd"
"""What NUL characters and lone surrogates become in stored text."""

_INT_MIN = -(2**63)
_INT_MAX = 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    """True when ``text`` holds a surrogate code point (``_SURROGATE`` would find one).

    UTF-8 has no encoding for them, so the strict encoder refuses exactly these texts:
    one pass in C, several times faster than the regular expression's scan."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str) -> str:
    """``text`` as every store holds it: NUL and lone surrogates replaced by U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    if not text.isascii() and _has_surrogate(text):
        # Through UTF-16: a pair written as two escapes joins, a lone half is replaced.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def is_clean_text(text: str) -> bool:
    """True when ``clean_text`` would return ``text`` unchanged."""
    return "\x00" not in text and (text.isascii() or not _has_surrogate(text))


def integer_text(value: int) -> str:
    """The stored form of an integer too large for 64 bits: its decimal text (hex past
    Python's digit limit for decimal conversion)."""
    try:
        return str(value)
    except ValueError:
        return hex(value)


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if _INT_MIN <= value <= _INT_MAX else integer_text(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    return clean_text(str(value))


def json_key(key: Any) -> str:
    """An object key as stored text (``true``/``false``/``null`` as JSON writes them)."""
    if isinstance(key, str):
        return clean_text(key)
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    stored = _scalar(key)
    return stored if isinstance(stored, str) else str(stored)


def storable(value: Any, depth: int = 0) -> Any:
    """``value`` in its stored JSON form (see the module docstring); never raises."""
    if isinstance(value, Mapping):
        if depth >= MAX_STORED_DEPTH:
            return TOO_DEEP
        return {json_key(k): storable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth >= MAX_STORED_DEPTH:
            return TOO_DEEP
        return [storable(v, depth + 1) for v in value]
    return _scalar(value)


def clean_strings(value: Any) -> Any:
    """``value`` with every string and key as ``clean_text`` stores it; numbers untouched.

    For validating a record against a schema by the stored rule for text, while a number
    too large for its field is still reported as such."""
    if isinstance(value, str):
        return value if is_clean_text(value) else clean_text(value)
    if isinstance(value, dict):
        return {clean_strings(k): clean_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_strings(v) for v in value]
    return value


def nesting_problem(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Where ``value`` nests deeper than ``limit`` levels, in words; None when it does not.

    Walks without recursion, so any depth a parser produced is measured safely.
    """
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            children: Any = node.items()
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        if depth >= limit:
            return (
                f"field {field_path(path)} is nested deeper than {limit} levels "
                f"(the limit for one record)"
            )
        for key, child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, (*path, key) if len(path) < 8 else path))
    return None


def field_path(path: tuple[str | int, ...]) -> str:
    """``message.content[0].input`` for ``("message", "content", 0, "input")``."""
    if not path:
        return "(the record itself)"
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            shown = clean_text(part) if len(part) <= 40 else clean_text(part[:37]) + "…"
            text += f".{shown}" if text else shown
    return text + ("…" if len(path) >= 8 else "")
