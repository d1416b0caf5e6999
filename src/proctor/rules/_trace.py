"""The ordered view of a conversation that rules walk through.

A trace is a list of events: a message, a tool call being made, and (when recorded) the
call's result. Calls follow the message that issued them; a call with no issuing
message is placed by its time. The same events are fed one by one to the live
supervisor and the gate, so a rule written once serves both.

Rules see no benchmark labels and no conversation attributes: only what an agent's
supervisor could see.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from proctor.transcript import ConversationBundle, ConversationKind, Message, ToolCall

EventKind = Literal["message", "call", "result"]
EVENT_KINDS: frozenset[EventKind] = frozenset({"message", "call", "result"})


@dataclass(frozen=True, slots=True)
class Event:
    """One step of a trace."""

    kind: EventKind
    index: int
    """Position in the trace."""
    message: Message | None = None
    call: ToolCall | None = None

    @property
    def source_type(self) -> Literal["message", "tool_call"]:
        """The kind of source this event cites."""
        return "message" if self.message is not None else "tool_call"

    @property
    def source_id(self) -> str:
        """The stable id of the message or tool call."""
        if self.message is not None:
            return self.message.source_id
        assert self.call is not None
        return self.call.source_id

    @property
    def at(self) -> datetime | None:
        """When it happened, when known (a result uses the call's completion time)."""
        if self.message is not None:
            return self.message.created_at
        assert self.call is not None
        if self.kind == "result":
            return self.call.completed_at or self.call.created_at
        return self.call.created_at


@dataclass(frozen=True, slots=True)
class TraceContext:
    """What rules may know about the conversation besides its events."""

    conversation_id: str
    project: str | None = None
    cwd: str | None = None
    format: str | None = None
    started_at: datetime | None = None
    kind: ConversationKind = "main"
    """``subagent`` and ``compaction`` traces are parts of a larger run: end-of-run checks
    (required artifacts, the final answer) belong to the main conversation only."""


@dataclass(frozen=True, slots=True)
class Trace:
    """A conversation as rules see it."""

    context: TraceContext
    events: tuple[Event, ...]

    @classmethod
    def from_parts(
        cls,
        context: TraceContext,
        messages: Sequence[Message],
        tool_calls: Sequence[ToolCall],
        *,
        active_branch_only: bool = True,
    ) -> Trace:
        """Order messages and calls into events (abandoned branches left out by default)."""
        if active_branch_only:
            messages = [m for m in messages if m.on_active_branch]
            tool_calls = [c for c in tool_calls if c.on_active_branch]
        return cls(context, tuple(_ordered_events(messages, tool_calls)))

    @classmethod
    def from_bundle(cls, bundle: ConversationBundle, *, project: str | None = None) -> Trace:
        """The trace of an adapter's bundle (after ``prepare_bundle``)."""
        conversation = bundle.conversation
        context = TraceContext(
            conversation_id=conversation.conversation_id,
            project=project or conversation.project_hint,
            cwd=conversation.cwd,
            format=conversation.format,
            started_at=conversation.started_at,
            kind=conversation.kind,
        )
        return cls.from_parts(context, bundle.messages, bundle.tool_calls)


def call_events(call: ToolCall, start: int) -> list[Event]:
    """The call event and, when the call has a result, its result event."""
    events = [Event("call", start, call=call)]
    if call.result_text is not None or call.status not in ("pending",):
        events.append(Event("result", start + 1, call=call))
    return events


def _ordered_events(messages: Sequence[Message], calls: Sequence[ToolCall]) -> Iterable[Event]:
    by_message: dict[str, list[ToolCall]] = {}
    known = {m.source_id for m in messages}
    loose: list[ToolCall] = []
    for call in calls:
        if call.message_source_id is not None and call.message_source_id in known:
            by_message.setdefault(call.message_source_id, []).append(call)
        else:
            loose.append(call)
    # A call with no issuing message goes after the last message not later than it.
    slots: dict[int, list[ToolCall]] = {}
    for call in loose:
        position = len(messages) - 1
        if call.created_at is not None:
            position = -1
            for i, message in enumerate(messages):
                if message.created_at is not None and message.created_at <= call.created_at:
                    position = i
        slots.setdefault(position, []).append(call)
    index = 0
    for call in slots.get(-1, []):
        for event in call_events(call, index):
            yield event
            index = event.index + 1
    for i, message in enumerate(messages):
        yield Event("message", index, message=message)
        index += 1
        for call in (*by_message.get(message.source_id, ()), *slots.get(i, ())):
            for event in call_events(call, index):
                yield event
                index = event.index + 1
