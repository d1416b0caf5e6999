"""Version fingerprints (SPEC ING-2).

A fingerprint hashes the *semantic* fields of a source: what was said or done, by whom,
when, and where. Tool-execution metadata (durations, structured patches, progress) is
left out, so a re-import that only changes such metadata keeps the fingerprint. A second
hash, the *content hash*, covers everything stored, so metadata changes can still be
written without counting as a new revision.

Canonical form: JSON with sorted keys, text NFC-normalised with trailing whitespace
trimmed, times as UTC ISO-8601 with milliseconds. Any value JSON allows can be hashed:
what the fast encoder refuses (integers past 64 bits, lone surrogates, nesting past its
limit, keys of other types) is hashed in its stored form (``_json.storable``).
"""

from __future__ import annotations

import contextlib
import hashlib
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from proctor.transcript._json import storable
from proctor.transcript._types import Message, TaskEvent, ToolCall

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def normalise_text(text: str) -> str:
    """NFC-normalise and trim trailing whitespace, the canonical form of stored text."""
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text.rstrip()


_TIME_TEXTS: dict[datetime, str] = {}
"""``canonical_time`` of recent UTC times: a source's time is hashed again by the call
made in it, the result that ends it, its content hash. Emptied when it holds
``_TIME_TEXTS_MAX``."""
_TIME_TEXTS_MAX = 4096


def canonical_time(value: datetime | None) -> str | None:
    """UTC ISO-8601 with milliseconds; naive times are taken as UTC."""
    if value is None:
        return None
    zone = value.tzinfo
    if zone is UTC and type(value) is datetime:
        # Equal UTC times have equal fields, so one text serves them all.
        text = _TIME_TEXTS.get(value)
        if text is None:
            if len(_TIME_TEXTS) >= _TIME_TEXTS_MAX:
                _TIME_TEXTS.clear()
            text = _TIME_TEXTS[value] = value.isoformat(timespec="milliseconds")
        return text
    if zone is None:
        value = value.replace(tzinfo=UTC)
    elif zone is not UTC:
        # Year 1 or 9999 with an offset: UTC falls outside the calendar; keep the offset.
        with contextlib.suppress(OverflowError):
            value = value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds")


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        # Prepared values never get here; raw adapter values may (content keys).
        return orjson.dumps(storable(value), option=_OPTIONS)


_NO_INPUT = hashlib.blake2b(digest_size=16)
"""The hash of nothing, never updated: a copy of it starts each digest (cheaper than
making one with its parameters; the same digests)."""


def _digest(payload: Any) -> str:
    digest = _NO_INPUT.copy()
    digest.update(_dumps(payload))
    return digest.hexdigest()


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys: the stored form of tool arguments and attributes."""
    return _dumps(value).decode()


def message_fingerprint(message: Message, conversation_id: str, *, normalised: bool = False) -> str:
    """Hash of role, kind, text, time, author and scope.

    ``normalised``: the text is already ``normalise_text``'s (a prepared source's): the
    same hash without a second normalisation pass over it."""
    text = message.text
    return _digest(
        (
            "message",
            conversation_id,
            message.role,
            message.kind,
            message.author,
            text if normalised else normalise_text(text),
            canonical_time(message.created_at),
        )
    )


def tool_call_fingerprint(call: ToolCall, conversation_id: str, *, normalised: bool = False) -> str:
    """Hash of name, arguments and result (stored form plus original size);
    ``normalised`` as ``message_fingerprint``."""
    text = call.result_text
    return _digest(
        (
            "tool_call",
            conversation_id,
            call.name,
            call.arguments,
            call.status,
            call.exit_code,
            text if text is None or normalised else normalise_text(text),
            call.result_size,
            canonical_time(call.created_at),
        )
    )


def task_event_fingerprint(
    event: TaskEvent, conversation_id: str, *, normalised: bool = False
) -> str:
    """Hash of kind, task, status, text and time; ``normalised`` as
    ``message_fingerprint``."""
    text = event.text
    return _digest(
        (
            "task_event",
            conversation_id,
            event.kind,
            event.task_id,
            event.status,
            text if normalised else normalise_text(text),
            canonical_time(event.created_at),
        )
    )


def content_hash(fingerprint: str, *extra: Any, attributes: Mapping[str, Any]) -> str:
    """Hash of everything stored for a source, metadata included."""
    return _digest((fingerprint, extra, attributes))
