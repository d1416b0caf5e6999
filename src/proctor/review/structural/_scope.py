"""One tool call being read: the call, its batch source, its conversation, its outcome."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from proctor.graph import SourceRef
from proctor.review._batch import BatchSource
from proctor.review.structural._builder import FactBuilder, Outcome
from proctor.transcript import Conversation, ToolCall

_BACKGROUND = ("Command running in background", "Async agent launched")


@dataclass(frozen=True, slots=True)
class CallScope:
    """What every fact of one tool call needs."""

    builder: FactBuilder
    source: BatchSource
    call: ToolCall
    conversation: Conversation | None
    exit_code: int | None
    """The call's exit code, or the one a shell tool printed (Gemini CLI's ``Exit Code: 1``)."""

    @property
    def cwd(self) -> str | None:
        """The conversation's working folder, when the format records it."""
        return None if self.conversation is None else self.conversation.cwd

    @property
    def occurred_at(self) -> datetime | None:
        """When the call was made (the source's time when the call has none)."""
        return self.call.created_at or self.source.occurred_at

    def cite(self, field: str | None = None, span: tuple[int, int] | None = None) -> SourceRef:
        """The call, one of its fields, or a character range of that field."""
        if span is None:
            return self.source.cite(field)
        return self.source.cite(field, span[0], span[1])


def call_outcome(call: ToolCall, exit_code: int | None) -> Outcome:
    """``failed`` for an error status or a non-zero exit; ``unknown`` when it has not ended.

    A call the harness moved to the background reports success for having started, not
    for what it does, so it is ``unknown`` too.
    """
    if call.status in ("pending", "interrupted", "rejected"):
        return "unknown"
    if call.status == "error" or (exit_code is not None and exit_code != 0):
        return "failed"
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if arguments.get("run_in_background") is True:
        return "unknown"
    if (call.result_text or "").startswith(_BACKGROUND):
        return "unknown"
    return "ok"
