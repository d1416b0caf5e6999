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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from proctor.errors import NotFoundError
from proctor.store import StoredTranscript
from proctor.store._trace_store import Citation, SubagentCard
from proctor.transcript import Message, ToolCall, Usage

FAILED_STATUSES = frozenset({"error", "interrupted", "rejected"})
"""Tool-call outcomes shown as failures (besides a non-zero exit code)."""

PROMPT_EXCERPT = 200
"""Characters of a turn's prompt its head repeats."""


class Tokens(BaseModel):
    """Token usage of one model response, as the transcript recorded it."""

    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int
    total: int


class FindingMark(BaseModel):
    """A finding that cites an item (the marker links to it)."""

    finding_id: str
    severity: str
    status: str


class SubagentCardOut(BaseModel):
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
    """The API shape of a sub-agent card."""
    return SubagentCardOut(
        conversation_id=card.conversation_id,
        parent_conversation_id=card.parent_conversation_id,
        parent_tool_call_id=card.parent_tool_call_id,
        title=card.title,
        agent_type=card.agent_type,
        description=card.description,
        status=card.status,
        stop_kind=card.stop_kind,
        finished=card.finished,
        summary=card.summary,
        rounds=card.rounds,
        total_tokens=card.total_tokens,
        tool_uses=card.tool_uses,
        tool_calls=card.tool_calls,
        messages=card.messages,
        duration_ms=card.duration_ms,
        started_at=card.started_at,
        ended_at=card.ended_at,
        findings=card.findings,
        open_findings=card.open_findings,
    )


class TranscriptItem(BaseModel):
    """One message or tool call, with the fields findings cite and its place in the trace."""

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
    role: str | None = None
    """A message's role."""
    kind: str | None = None
    """A message's kind (``prompt``, ``reply``, ``injected``, ``summary`` …)."""
    text: str | None = None
    """A message's text."""
    model: str | None = None
    tokens: Tokens | None = None
    name: str | None = None
    """A tool call's tool."""
    arguments: Any = None
    """A tool call's arguments, as the tool received them."""
    status: str | None = None
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


class TurnHead(BaseModel):
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


class ParentLink(BaseModel):
    """Where a sub-agent conversation came from (the breadcrumb back)."""

    conversation_id: str
    title: str | None
    tool_call_id: str | None


class TranscriptPage(BaseModel):
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


def _message(message: Message) -> TranscriptItem:
    return TranscriptItem(
        source_type="message",
        source_id=message.source_id,
        index=0,
        turn=0,
        turn_start=False,
        occurred_at=message.created_at,
        offset_ms=None,
        duration_ms=None,
        on_active_branch=message.on_active_branch,
        role=message.role,
        kind=message.kind,
        text=message.text,
        model=message.model,
        tokens=_tokens(message.usage),
    )


def _milliseconds(later: datetime, earlier: datetime) -> int:
    return max(0, round((later - earlier).total_seconds() * 1000))


def _call(call: ToolCall) -> TranscriptItem:
    failed = call.status in FAILED_STATUSES or (call.exit_code is not None and call.exit_code != 0)
    duration = None
    if call.created_at is not None and call.completed_at is not None:
        duration = _milliseconds(call.completed_at, call.created_at)
    return TranscriptItem(
        source_type="tool_call",
        source_id=call.source_id,
        index=0,
        turn=0,
        turn_start=False,
        occurred_at=call.created_at,
        offset_ms=None,
        duration_ms=duration,
        on_active_branch=call.on_active_branch,
        name=call.name,
        arguments=call.arguments,
        status=call.status,
        exit_code=call.exit_code,
        failed=failed,
        result_text=call.result_text,
        result_size=call.result_size,
    )


def reading_order(transcript: StoredTranscript) -> list[TranscriptItem]:
    """Messages in order, each followed by its tool calls; calls without a message by time."""
    message_ids = {m.source_id for m in transcript.messages}
    attached: dict[str, list[ToolCall]] = {}
    loose: list[ToolCall] = []
    for call in transcript.tool_calls:
        if call.message_source_id in message_ids:
            attached.setdefault(call.message_source_id, []).append(call)
        else:
            loose.append(call)
    items: list[TranscriptItem] = []
    for message in transcript.messages:
        items.append(_message(message))
        items.extend(_call(call) for call in attached.get(message.source_id, ()))
    stamps = [item.occurred_at.timestamp() if item.occurred_at else 0.0 for item in items]
    for call in loose:  # after the last item that happened no later than the call
        at = call.created_at.timestamp() if call.created_at else float("inf")
        where = bisect.bisect_right(stamps, at)
        items.insert(where, _call(call))
        stamps.insert(where, at)
    return items


def _end(item: TranscriptItem) -> datetime | None:
    if item.occurred_at is None or item.duration_ms is None:
        return item.occurred_at
    return item.occurred_at + timedelta(milliseconds=item.duration_ms)


def _place(items: list[TranscriptItem], context: TraceContext) -> list[TurnHead]:
    """Number items and turns, time them, attach citations and cards; the turn heads."""
    cards = {c.parent_tool_call_id: c for c in context.cards if c.parent_tool_call_id}
    # A message lasts until the next item that has a time (a reply: until its first call).
    following: datetime | None = None
    for item in reversed(items):
        if item.source_type == "message" and item.occurred_at is not None and following:
            item.duration_ms = _milliseconds(following, item.occurred_at)
        if item.occurred_at is not None:
            following = item.occurred_at
    stamps = [item.occurred_at for item in items if item.occurred_at is not None]
    start = min(stamps, default=None)
    heads: list[TurnHead] = []
    turn = 0
    for index, item in enumerate(items):
        item.index = index
        if item.source_type == "message" and item.kind == "prompt" and item.role == "user":
            turn += 1
            item.turn_start = True
        item.turn = turn
        if start is not None and item.occurred_at is not None:
            item.offset_ms = _milliseconds(item.occurred_at, start)
        item.findings = [
            FindingMark(finding_id=c.finding_id, severity=c.severity, status=c.status)
            for c in context.citations.get((item.source_type, item.source_id), ())
        ]
        card = cards.get(item.source_id) if item.source_type == "tool_call" else None
        item.subagent = None if card is None else card_out(card)
        if not heads or heads[-1].turn != turn:
            heads.append(_new_head(item))
        _count_into(heads[-1], item)
    if start is not None:
        for head, (first, last) in zip(heads, _bounds(items, heads), strict=True):
            ends = [e for e in (_end(i) for i in items[first:last]) if e is not None]
            if head.started_at is not None and ends:
                head.duration_ms = _milliseconds(max(ends), head.started_at)
    return heads


def _new_head(item: TranscriptItem) -> TurnHead:
    prompt = (item.text or "")[:PROMPT_EXCERPT] if item.turn_start else None
    return TurnHead(
        turn=item.turn,
        index=item.index,
        items=0,
        prompt=prompt,
        started_at=None,
        offset_ms=None,
        duration_ms=None,
        tool_calls=0,
        failed=0,
        findings=0,
        tokens=0,
        subagents=0,
    )


def _count_into(head: TurnHead, item: TranscriptItem) -> None:
    head.items += 1
    if head.started_at is None and item.occurred_at is not None:
        head.started_at = item.occurred_at
        head.offset_ms = item.offset_ms
    if item.source_type == "tool_call":
        head.tool_calls += 1
        head.failed += int(item.failed)
    head.findings += len(item.findings)  # counted per citing item; made distinct below
    head.tokens += item.tokens.total if item.tokens else 0
    head.subagents += int(item.subagent is not None)


def _bounds(items: list[TranscriptItem], heads: list[TurnHead]) -> list[tuple[int, int]]:
    starts = [head.index for head in heads]
    return list(zip(starts, [*starts[1:], len(items)], strict=True))


def _distinct_findings(items: list[TranscriptItem], heads: list[TurnHead]) -> None:
    for head, (first, last) in zip(heads, _bounds(items, heads), strict=True):
        head.findings = len({m.finding_id for i in items[first:last] for m in i.findings})


def transcript_page(
    transcript: StoredTranscript,
    context: TraceContext,
    *,
    limit: int,
    offset: int,
    around: str | None = None,
    turn: int | None = None,
) -> TranscriptPage:
    """A window of the trace; with ``around`` (a source id) or ``turn``, the window
    (aligned to ``limit``) that holds that source or the turn's first item."""
    items = reading_order(transcript)
    heads = _place(items, context)
    _distinct_findings(items, heads)
    if around is not None:
        index = next((i for i, item in enumerate(items) if item.source_id == around), None)
        if index is None:
            raise NotFoundError(
                f"no message or tool call {around!r} in this conversation; "
                "its transcript lists the ids"
            )
        offset = index // limit * limit
    elif turn is not None:
        head = next((h for h in heads if h.turn == turn), None)
        if head is None:
            raise NotFoundError(
                f"no turn {turn} in this conversation; it has turns "
                f"{heads[0].turn}–{heads[-1].turn}"
                if heads
                else f"no turn {turn}: this conversation has no messages or tool calls"
            )
        offset = head.index // limit * limit
    window = items[offset : offset + limit]
    touched = {item.turn for item in window}
    stamps = [item.occurred_at for item in items if item.occurred_at is not None]
    ends = [e for e in (_end(item) for item in items) if e is not None]
    start = min(stamps, default=None)
    return TranscriptPage(
        conversation_id=transcript.summary.conversation_id,
        limit=limit,
        offset=offset,
        total=len(items),
        started_at=start,
        span_ms=None if start is None else _milliseconds(max(ends), start),
        turn_count=len(heads),
        turns=[head for head in heads if head.turn in touched],
        items=window,
        parent=context.parent,
        subagent_run=None if context.own_card is None else card_out(context.own_card),
    )
