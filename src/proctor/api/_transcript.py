"""A conversation's trace for reading: turns, messages and tool calls with their raw fields.

Findings cite a field of a source and a character range in it (``text``,
``result_text``, ``arguments.command``); the UI marks that range, so each field is
given as stored, not folded into one display text.

The trace groups the reading order into turns (a person's prompt and everything until
the next one), gives every item its start offset and duration for a waterfall, its
status, model and tokens, the findings that cite it and, on a tool call that started a
sub-agent, that sub-agent's card. Pages are windows of the reading order, so a
conversation of thousands of messages is sent a window at a time; the turns a window
touches come with it, whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from proctor.api._base_models import WireModel
from proctor.errors import NotFoundError
from proctor.findings import Severity, Status
from proctor.store import Citation, ConversationSummary, SubagentCard
from proctor.transcript import Message, MessageKind, Role, ToolCall, ToolStatus, Usage

FAILED_STATUSES = frozenset({"error", "interrupted", "rejected"})
"""Tool-call outcomes shown as failures (besides a non-zero exit code)."""

PROMPT_EXCERPT = 200
"""Characters of a turn's prompt its head repeats."""


class Tokens(WireModel):
    """Token usage of one model response, as the transcript recorded it."""

    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int
    total: int


class FindingMark(WireModel):
    """A finding that cites an item (the marker links to it)."""

    finding_id: str
    severity: Severity
    status: Status


class SubagentCardOut(WireModel):
    """A sub-agent run as its parent shows it (seed 004)."""

    conversation_id: str
    """The sub-agent's own conversation: its trace."""
    parent_conversation_id: str
    parent_tool_call_id: str | None
    title: str | None
    agent_type: str | None
    description: str | None
    """The task it was given."""
    status: str | None
    stop_kind: str | None
    finished: bool
    """True once it ended; the UI shows a finished card collapsed ("digested")."""
    summary: str | None
    """Its final answer as the parent saw it."""
    rounds: int
    total_tokens: int
    tool_uses: int
    tool_calls: int
    """Tool calls stored in the sub-agent's conversation."""
    messages: int
    duration_ms: int | None
    started_at: datetime | None
    ended_at: datetime | None
    findings: int
    """Findings of the sub-agent's own conversation."""
    open_findings: int


def card_out(card: SubagentCard) -> SubagentCardOut:
    """The API shape of a sub-agent card: the store's card read field by field (``finished``
    is its property)."""
    return SubagentCardOut.model_validate(card, from_attributes=True)


class TranscriptItem(BaseModel):
    """One message or tool call, with the fields findings cite and its place in the trace."""

    model_config = ConfigDict(defer_build=True)

    source_type: Literal["message", "tool_call"]
    source_id: str
    index: int
    """Place in the conversation's reading order (0-based)."""
    turn: int
    """The turn it belongs to: 0 before the first prompt, then 1, 2 … per prompt."""
    turn_start: bool
    """True for the prompt that starts its turn."""
    occurred_at: datetime | None
    offset_ms: int | None
    """Milliseconds from the trace's first time to this item's start (the waterfall)."""
    duration_ms: int | None
    """A tool call: completed − started; a message: until the next item that has a time."""
    on_active_branch: bool
    """False for a message or call on an abandoned branch (edited or retried)."""
    role: Role | None = None
    """A message's role."""
    kind: MessageKind | None = None
    """A message's kind (``prompt``, ``reply``, ``injected``, ``summary`` …)."""
    text: str | None = None
    """A message's text."""
    model: str | None = None
    tokens: Tokens | None = None
    name: str | None = None
    """A tool call's tool."""
    arguments: Any = None
    """A tool call's arguments, as the tool received them."""
    status: ToolStatus | None = None
    """A tool call's outcome: ``ok``, ``error``, ``pending`` …"""
    exit_code: int | None = None
    failed: bool = False
    """A tool call that failed: an error, interrupted or rejected status, or exit code ≠ 0."""
    result_text: str | None = None
    """What the tool returned (bounded on import)."""
    result_size: int | None = None
    """The original result's length when ``result_text`` was stored cut."""
    findings: list[FindingMark] = []
    """Findings whose evidence cites this item, most severe first."""
    subagent: SubagentCardOut | None = None
    """On the tool call that started a sub-agent: its card."""


class TurnHead(WireModel):
    """One turn in summary: where it starts, how long it ran, what happened in it."""

    turn: int
    index: int
    """Reading-order place of its first item."""
    items: int
    prompt: str | None
    """The start of the prompt that opened it (None for turn 0)."""
    started_at: datetime | None
    offset_ms: int | None
    duration_ms: int | None
    """From its first item's start to its last item's end."""
    tool_calls: int
    failed: int
    """Tool calls in it that failed."""
    findings: int
    """Distinct findings citing its items."""
    tokens: int
    """Total tokens of its model responses."""
    subagents: int


class ParentLink(WireModel):
    """Where a sub-agent conversation came from (the breadcrumb back)."""

    conversation_id: str
    title: str | None
    tool_call_id: str | None
    imported: bool = True
    """False when only the sub-agent's own file was imported: the parent is named, not linked."""


class TranscriptPage(WireModel):
    """A window of a conversation's trace in reading order."""

    conversation_id: str
    limit: int
    offset: int
    total: int
    """Items in the whole conversation."""
    started_at: datetime | None
    """The trace's first time; ``offset_ms`` counts from here."""
    span_ms: int | None
    """From the first start to the last end: the waterfall's full width."""
    turn_count: int
    turns: list[TurnHead]
    """The turns this window's items belong to (whole, even when the window cuts one)."""
    items: list[TranscriptItem]
    parent: ParentLink | None = None
    subagent_run: SubagentCardOut | None = None
    """This conversation's own card when it is a sub-agent."""


@dataclass(frozen=True, slots=True)
class TraceContext:
    """What the trace adds to a transcript: citations, cards, the parent link."""

    citations: Mapping[tuple[str, str], Sequence[Citation]]
    cards: Sequence[SubagentCard]
    parent: ParentLink | None = None
    own_card: SubagentCard | None = None


def _tokens(usage: Usage | None) -> Tokens | None:
    if usage is None:
        return None
    return Tokens(
        input=usage.input_tokens,
        output=usage.output_tokens,
        cache_read=usage.cache_read_tokens,
        cache_write=usage.cache_write_tokens,
        reasoning=usage.reasoning_tokens,
        total=usage.total_tokens,
    )


def _milliseconds(later: datetime, earlier: datetime) -> int:
    return max(0, round((later - earlier).total_seconds() * 1000))


@dataclass(slots=True)
class _Entry:
    """One message or tool call while the trace is laid out (cheap to build for every item;
    only a window's entries become ``TranscriptItem``)."""

    source: Message | ToolCall
    occurred_at: datetime | None
    duration_ms: int | None = None
    index: int = 0
    turn: int = 0
    turn_start: bool = False
    offset_ms: int | None = None
    failed: bool = False
    citations: Sequence[Citation] = ()
    card: SubagentCard | None = None

    @property
    def source_type(self) -> Literal["message", "tool_call"]:
        return "message" if isinstance(self.source, Message) else "tool_call"

    def end(self) -> datetime | None:
        if self.occurred_at is None or self.duration_ms is None:
            return self.occurred_at
        return self.occurred_at + timedelta(milliseconds=self.duration_ms)


def _call_entry(call: ToolCall) -> _Entry:
    entry = _Entry(call, call.created_at)
    entry.failed = call.status in FAILED_STATUSES or call.exit_code not in (None, 0)
    if call.created_at is not None and call.completed_at is not None:
        entry.duration_ms = _milliseconds(call.completed_at, call.created_at)
    return entry


class Outline(Protocol):
    """What a trace is laid out from: a ``StoredTranscript`` or the store's ``TraceOutline``."""

    @property
    def summary(self) -> ConversationSummary: ...
    @property
    def messages(self) -> Sequence[Message]: ...
    @property
    def tool_calls(self) -> Sequence[ToolCall]: ...


WindowLoader = Callable[
    [Sequence[str], Sequence[str]], tuple[Mapping[str, Message], Mapping[str, ToolCall]]
]
"""Reads whole messages and tool calls by source id (the window an outline lacks)."""


def reading_order(transcript: Outline) -> list[_Entry]:
    """Messages in order, each followed by its tool calls; calls without a message by time."""
    message_ids = {m.source_id for m in transcript.messages}
    attached: dict[str, list[ToolCall]] = {}
    loose: list[ToolCall] = []
    for call in transcript.tool_calls:
        if call.message_source_id in message_ids:
            attached.setdefault(call.message_source_id, []).append(call)
        else:
            loose.append(call)
    entries: list[_Entry] = []
    for message in transcript.messages:
        entries.append(_Entry(message, message.created_at))
        entries.extend(_call_entry(call) for call in attached.get(message.source_id, ()))
    stamps = [e.occurred_at.timestamp() if e.occurred_at else 0.0 for e in entries]
    for call in loose:  # after the last item that happened no later than the call
        at = call.created_at.timestamp() if call.created_at else float("inf")
        where = bisect.bisect_right(stamps, at)
        entries.insert(where, _call_entry(call))
        stamps.insert(where, at)
    return entries


@dataclass(slots=True)
class _Turn:
    turn: int
    index: int
    prompt: str | None
    items: int = 0
    started_at: datetime | None = None
    offset_ms: int | None = None
    last_end: datetime | None = None
    tool_calls: int = 0
    failed: int = 0
    findings: set[str] = field(default_factory=set)
    tokens: int = 0
    subagents: int = 0

    def head(self) -> TurnHead:
        duration = None
        if self.started_at is not None and self.last_end is not None:
            duration = _milliseconds(self.last_end, self.started_at)
        return TurnHead(
            turn=self.turn,
            index=self.index,
            items=self.items,
            prompt=self.prompt,
            started_at=self.started_at,
            offset_ms=self.offset_ms,
            duration_ms=duration,
            tool_calls=self.tool_calls,
            failed=self.failed,
            findings=len(self.findings),
            tokens=self.tokens,
            subagents=self.subagents,
        )


def _place(entries: list[_Entry], context: TraceContext) -> tuple[list[_Turn], datetime | None]:
    """Number entries and turns, time them, attach citations and cards; the turns and the
    trace's first time."""
    cards = {c.parent_tool_call_id: c for c in context.cards if c.parent_tool_call_id}
    # A message lasts until the next item that has a time (a reply: until its first call).
    following: datetime | None = None
    for entry in reversed(entries):
        if entry.source_type == "message" and entry.occurred_at is not None and following:
            entry.duration_ms = _milliseconds(following, entry.occurred_at)
        if entry.occurred_at is not None:
            following = entry.occurred_at
    start = min((e.occurred_at for e in entries if e.occurred_at is not None), default=None)
    turns: list[_Turn] = []
    number = 0
    for index, entry in enumerate(entries):
        entry.index = index
        source = entry.source
        if isinstance(source, Message) and source.kind == "prompt" and source.role == "user":
            number += 1
            entry.turn_start = True
        entry.turn = number
        if start is not None and entry.occurred_at is not None:
            entry.offset_ms = _milliseconds(entry.occurred_at, start)
        entry.citations = context.citations.get((entry.source_type, source.source_id), ())
        if isinstance(source, ToolCall):
            entry.card = cards.get(source.source_id)
        if not turns or turns[-1].turn != number:
            prompt = (
                source.text[:PROMPT_EXCERPT]
                if entry.turn_start and isinstance(source, Message)
                else None
            )
            turns.append(_Turn(number, index, prompt))
        _count_into(turns[-1], entry)
    return turns, start


def _count_into(turn: _Turn, entry: _Entry) -> None:
    turn.items += 1
    if turn.started_at is None and entry.occurred_at is not None:
        turn.started_at = entry.occurred_at
        turn.offset_ms = entry.offset_ms
    end = entry.end()
    if end is not None and (turn.last_end is None or end > turn.last_end):
        turn.last_end = end
    source = entry.source
    if isinstance(source, ToolCall):
        turn.tool_calls += 1
        turn.failed += int(entry.failed)
        turn.subagents += int(entry.card is not None)
    elif source.usage is not None:
        turn.tokens += source.usage.total_tokens
    turn.findings.update(c.finding_id for c in entry.citations)


def _item(entry: _Entry) -> TranscriptItem:
    """The API shape of one laid-out entry."""
    marks = [
        FindingMark(finding_id=c.finding_id, severity=c.severity, status=c.status)
        for c in entry.citations
    ]
    common: dict[str, Any] = {
        "source_id": entry.source.source_id,
        "index": entry.index,
        "turn": entry.turn,
        "turn_start": entry.turn_start,
        "occurred_at": entry.occurred_at,
        "offset_ms": entry.offset_ms,
        "duration_ms": entry.duration_ms,
        "on_active_branch": entry.source.on_active_branch,
        "findings": marks,
    }
    source = entry.source
    if isinstance(source, Message):
        return TranscriptItem(
            source_type="message",
            role=source.role,
            kind=source.kind,
            text=source.text,
            model=source.model,
            tokens=_tokens(source.usage),
            **common,
        )
    return TranscriptItem(
        source_type="tool_call",
        name=source.name,
        arguments=source.arguments,
        status=source.status,
        exit_code=source.exit_code,
        failed=entry.failed,
        result_text=source.result_text,
        result_size=source.result_size,
        subagent=None if entry.card is None else card_out(entry.card),
        **common,
    )


def transcript_page(
    transcript: Outline,
    context: TraceContext,
    *,
    limit: int,
    offset: int,
    around: str | None = None,
    turn: int | None = None,
    load: WindowLoader | None = None,
) -> TranscriptPage:
    """A window of the trace; with ``around`` (a source id) or ``turn``, the window
    (aligned to ``limit``) that holds that source or the turn's first item. From an outline,
    ``load`` reads the window's messages and calls whole."""
    entries = reading_order(transcript)
    turns, start = _place(entries, context)
    if around is not None:
        index = next((e.index for e in entries if e.source.source_id == around), None)
        if index is None:
            raise NotFoundError(
                f"no message or tool call {around!r} in this conversation; "
                "its transcript lists the ids"
            )
        offset = index // limit * limit
    elif turn is not None:
        found = next((t for t in turns if t.turn == turn), None)
        if found is None:
            raise NotFoundError(
                f"no turn {turn} in this conversation; it has turns "
                f"{turns[0].turn}–{turns[-1].turn}"
                if turns
                else f"no turn {turn}: this conversation has no messages or tool calls"
            )
        offset = found.index // limit * limit
    window = entries[offset : offset + limit]
    if load is not None:
        messages, calls = load(
            [e.source.source_id for e in window if isinstance(e.source, Message)],
            [e.source.source_id for e in window if isinstance(e.source, ToolCall)],
        )
        for entry in window:
            whole = (messages if isinstance(entry.source, Message) else calls).get(
                entry.source.source_id
            )
            if whole is not None:
                entry.source = whole
    touched = {entry.turn for entry in window}
    ends = [t.last_end for t in turns if t.last_end is not None]
    return TranscriptPage(
        conversation_id=transcript.summary.conversation_id,
        limit=limit,
        offset=offset,
        total=len(entries),
        started_at=start,
        span_ms=None if start is None or not ends else _milliseconds(max(ends), start),
        turn_count=len(turns),
        turns=[t.head() for t in turns if t.turn in touched],
        items=[_item(entry) for entry in window],
        parent=context.parent,
        subagent_run=None if context.own_card is None else card_out(context.own_card),
    )
