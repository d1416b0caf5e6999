"""Run events from ``system`` and ``attachment`` records (compaction, API errors, hooks).

Only records with something a supervisor should see become events: compaction
boundaries, API errors and refusals, local command output, away summaries, model-switch
warnings and hook errors. Timing and bookkeeping records (``turn_duration``,
``session_start``, successful hooks, tool listings) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from proctor.sources.claude_code._values import as_int, as_str

_QUIET_SUBTYPES = frozenset({"turn_duration", "session_start", "stop_hook_summary"})
_HOOK_ERRORS = frozenset({"hook_blocking_error", "hook_non_blocking_error"})


@dataclass(frozen=True, slots=True)
class EventInfo:
    """What a ``TaskEvent`` is made of, read from one record."""

    kind: str
    text: str
    attributes: dict[str, Any] = field(default_factory=dict)


def system_event(record: dict[str, Any]) -> EventInfo | None:
    """The event a ``system`` record stands for, or None for timing and bookkeeping."""
    subtype = as_str(record.get("subtype"))
    content = record.get("content")
    text = content.strip() if isinstance(content, str) else ""
    if subtype == "compact_boundary":
        metadata = record.get("compactMetadata")
        attributes: dict[str, Any] = {}
        if isinstance(metadata, dict):
            attributes = _scalars(metadata, ("trigger", "preTokens", "postTokens", "durationMs"))
        return EventInfo("compaction", text or "Conversation compacted", attributes)
    if subtype in ("api_error", "error"):
        attributes = _scalars(record, ("retryAttempt", "maxRetries", "retryInMs"))
        error = record.get("error")
        status = as_int(error.get("status")) if isinstance(error, dict) else None
        if status is not None:
            attributes["status"] = status
        message = _error_message(error) or text
        return EventInfo(subtype, message or f"API error (status {status})", attributes)
    if subtype == "api_refusal":
        explanation = as_str(record.get("apiRefusalExplanation")) or text
        return EventInfo(subtype, explanation, _scalars(record, ("apiRefusalCategory",)))
    if subtype == "model_refusal_fallback":
        attributes = _scalars(record, ("originalModel", "fallbackModel", "apiRefusalCategory"))
        return EventInfo(subtype, text, attributes)
    if subtype == "stop_hook_summary":
        return _stop_hook_event(record)
    if subtype in _QUIET_SUBTYPES or not text:
        return None
    if subtype is None:
        # Older builds wrote bare notices, e.g. "Claude Opus 4 limit reached, now using Sonnet 4".
        level = as_str(record.get("level"))
        return EventInfo("warning" if level == "warning" else "notice", text)
    return EventInfo(subtype, text)


def attachment_event(record: dict[str, Any]) -> EventInfo | None:
    """A hook error event from an ``attachment`` record; other attachments give None."""
    attachment = record.get("attachment")
    if not isinstance(attachment, dict):
        return None
    kind = attachment.get("type")
    if kind not in _HOOK_ERRORS:
        return None
    attributes = _scalars(attachment, ("hookName", "hookEvent", "command", "exitCode", "toolUseID"))
    if kind == "hook_blocking_error":
        blocking = attachment.get("blockingError")
        if isinstance(blocking, dict):
            text = as_str(blocking.get("blockingError")) or ""
            command = as_str(blocking.get("command"))
            if command is not None:
                attributes.setdefault("command", command)
        else:
            text = as_str(blocking) or ""
    else:
        text = as_str(attachment.get("stderr")) or as_str(attachment.get("stdout")) or ""
    return EventInfo(str(kind), text.strip(), attributes)


def _stop_hook_event(record: dict[str, Any]) -> EventInfo | None:
    errors = record.get("hookErrors")
    prevented = record.get("preventedContinuation") is True
    messages = [str(e) for e in errors if e] if isinstance(errors, list) else []
    if not messages and not prevented:
        return None
    text = "\n".join(messages) or (as_str(record.get("stopReason")) or "")
    return EventInfo("hook_error", text, {"preventedContinuation": prevented})


def _error_message(error: Any) -> str | None:
    """The human message of an API error object, wherever this version put it."""
    while isinstance(error, dict):
        message = as_str(error.get("message"))
        if message is not None:
            return message
        error = error.get("error")
    return None


def _scalars(source: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in keys:
        value = source.get(key)
        if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) < 300):
            found[key] = value
    return found
