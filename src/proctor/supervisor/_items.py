"""Single window entries: a message, a tool call or a task event as the model sees it.

Each renderer returns the JSON object of one data line and how many characters it left
out. Only visible fields are rendered: never ``attributes`` (format metadata that could
carry anything), never another conversation's data. Every string passes through the
import redactor once more, as a second line of defence against secrets.
"""

from __future__ import annotations

import json
from typing import Any

from proctor.redaction import Redactor
from proctor.transcript import Message, TaskEvent, ToolCall

_MARK_RESERVE = 40
"""Room kept for the omission marker, so a clipped text stays within its limit."""


def clip(text: str, limit: int) -> tuple[str, int]:
    """Head and tail of ``text`` within ``limit`` characters, and how many were left out."""
    if len(text) <= limit:
        return text, 0
    keep = max(limit - _MARK_RESERVE, 0)
    head = keep * 2 // 3
    tail = keep - head
    omitted = len(text) - keep
    ending = text[len(text) - tail :] if tail else ""
    return f"{text[:head]} [… {omitted:,} characters omitted …] {ending}", omitted


class Renderer:
    """Renders entries with one redactor (so its count covers the whole window)."""

    def __init__(self) -> None:
        self.redactor = Redactor()
        self._redacted: dict[str, str] = {}

    def text(self, text: str, limit: int) -> tuple[str, int]:
        """Redacted (once per distinct text, so re-rendering does not recount), then clipped."""
        redacted = self._redacted.get(text)
        if redacted is None:
            redacted = self._redacted[text] = self.redactor.redact(text)
        return clip(redacted, limit)

    def message(self, window_id: str, message: Message, limit: int) -> tuple[dict[str, Any], int]:
        """A message: role, kind, author when recorded, text."""
        text, omitted = self.text(message.text, limit)
        entry: dict[str, Any] = {
            "id": window_id,
            "type": "message",
            "role": message.role,
            "kind": message.kind,
        }
        if message.author is not None:
            entry["author"] = self.text(message.author, limit)[0]
        entry["text"] = text
        return entry, omitted

    def tool_call(
        self, window_id: str, call: ToolCall, *, argument_chars: int, output_chars: int
    ) -> tuple[dict[str, Any], int]:
        """A tool call: name, status, exit code, argument summary and bounded output summary."""
        arguments, omitted = self.text(_argument_text(call.arguments), argument_chars)
        entry: dict[str, Any] = {
            "id": window_id,
            "type": "tool_call",
            "name": call.name,
            "status": call.status,
        }
        if call.exit_code is not None:
            entry["exit_code"] = call.exit_code
        entry["arguments"] = arguments
        if call.result_text is not None:
            output, clipped = self.text(call.result_text, output_chars)
            entry["output"] = output
            original = call.result_size or len(call.result_text)
            if clipped or original > len(call.result_text):
                entry["output_chars"] = original
            omitted += clipped
        return entry, omitted

    def task_event(
        self, window_id: str, event: TaskEvent, limit: int
    ) -> tuple[dict[str, Any], int]:
        """A task event: kind, status, text."""
        text, omitted = self.text(event.text, limit)
        entry: dict[str, Any] = {"id": window_id, "type": "task_event", "kind": event.kind}
        if event.status is not None:
            entry["status"] = event.status
        entry["text"] = text
        return entry, omitted


def _argument_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=str)
