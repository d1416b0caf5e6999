"""Building evidence that points at the exact message, call, field and characters."""

from __future__ import annotations

from proctor._util.text import one_line
from proctor.findings import Evidence
from proctor.transcript import Message, ToolCall

EXCERPT_CHARS = 200


def _excerpt(text: str, start: int | None, end: int | None) -> str:
    if start is None or end is None:
        return one_line(text, EXCERPT_CHARS)
    return one_line(text, EXCERPT_CHARS, start=start, end=end)


def cite_message(message: Message, start: int | None = None, end: int | None = None) -> Evidence:
    """A message, or a character range of its text."""
    return Evidence(
        source_type="message",
        source_id=message.source_id,
        field="text" if start is not None else None,
        start=start,
        end=end,
        excerpt=_excerpt(message.text, start, end) if message.text else None,
    )


def cite_call(call: ToolCall, field: str = "arguments", text: str | None = None) -> Evidence:
    """A tool call, optionally one argument (dot path) and the text it held."""
    return Evidence(
        source_type="tool_call",
        source_id=call.source_id,
        field=field,
        excerpt=None if text is None else _excerpt(text, None, None),
    )


def cite_result(call: ToolCall, start: int | None = None, end: int | None = None) -> Evidence:
    """A tool call's result, or a character range of it."""
    text = call.result_text or ""
    return Evidence(
        source_type="tool_call",
        source_id=call.source_id,
        field="result_text",
        start=start,
        end=end,
        excerpt=_excerpt(text, start, end) if text else None,
    )


def cite_absence(conversation_id: str, missing: str) -> Evidence:
    """The whole conversation, for something that never happened."""
    return Evidence(source_type="conversation", source_id=conversation_id, missing=missing)
