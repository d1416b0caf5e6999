"""A conversation's transcript for reading: messages and tool calls with their raw fields.

Findings cite a field of a source and a character range in it (``text``,
``result_text``, ``arguments.command``); the UI marks that range, so each field is
given as stored, not folded into one display text.
"""

from __future__ import annotations

import bisect
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from proctor.errors import NotFoundError
from proctor.store import StoredTranscript
from proctor.transcript import Message, ToolCall


class TranscriptItem(BaseModel):
    """One message or tool call, with the fields findings cite."""

    source_type: Literal["message", "tool_call"]
    source_id: str
    occurred_at: datetime | None
    on_active_branch: bool
    """False for a message or call on an abandoned branch (edited or retried)."""
    role: str | None = None
    """A message's role."""
    kind: str | None = None
    """A message's kind (``text``, ``tool_result``, ``summary`` …)."""
    text: str | None = None
    """A message's text."""
    name: str | None = None
    """A tool call's tool."""
    arguments: Any = None
    """A tool call's arguments, as the tool received them."""
    status: str | None = None
    """A tool call's outcome: ``ok``, ``error``, ``pending`` …"""
    exit_code: int | None = None
    result_text: str | None = None
    """What the tool returned (bounded on import)."""


class TranscriptPage(BaseModel):
    """A page of a conversation's transcript in reading order."""

    conversation_id: str
    limit: int
    offset: int
    total: int
    items: list[TranscriptItem]


def _message(message: Message) -> TranscriptItem:
    return TranscriptItem(
        source_type="message",
        source_id=message.source_id,
        occurred_at=message.created_at,
        on_active_branch=message.on_active_branch,
        role=message.role,
        kind=message.kind,
        text=message.text,
    )


def _call(call: ToolCall) -> TranscriptItem:
    return TranscriptItem(
        source_type="tool_call",
        source_id=call.source_id,
        occurred_at=call.created_at,
        on_active_branch=call.on_active_branch,
        name=call.name,
        arguments=call.arguments,
        status=call.status,
        exit_code=call.exit_code,
        result_text=call.result_text,
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


def transcript_page(
    transcript: StoredTranscript, *, limit: int, offset: int, around: str | None
) -> TranscriptPage:
    """A page of the transcript; with ``around``, the page that holds that source."""
    items = reading_order(transcript)
    if around is not None:
        index = next((i for i, item in enumerate(items) if item.source_id == around), None)
        if index is None:
            raise NotFoundError(
                f"no message or tool call {around!r} in this conversation; "
                "its transcript lists the ids"
            )
        offset = index // limit * limit
    return TranscriptPage(
        conversation_id=transcript.summary.conversation_id,
        limit=limit,
        offset=offset,
        total=len(items),
        items=items[offset : offset + limit],
    )
