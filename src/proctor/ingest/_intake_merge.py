"""How an intake request extends a stored conversation (SPEC ING-7), as pure functions.

``merge`` joins what a request sent with the part of the stored conversation it concerns
(a ``TranscriptExcerpt``: the stored items the request revises or completes, the last
message, the assistant messages a new call may belong to). Given the whole stored
conversation instead, it gives the same items for everything the request writes:

- messages, tool calls, task events and tasks are keyed by their source ids; a known id
  replaces the stored item in place (a revision), an unknown one is appended;
- an appended message that names no parent answers the message before it (the last
  stored one, for the first of a request);
- an appended call that names no message belongs to the latest assistant message;
- conversation fields a request does not set keep their stored values.

``places_of`` gives each item its stored place (``seq``): a known one keeps its place, an
appended one goes after the conversation's last.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import fields, replace
from typing import TypeVar

from proctor.store import SourceKey, StoredTranscript, TranscriptExcerpt
from proctor.transcript import Conversation, ConversationBundle, Message, ToolCall

_T = TypeVar("_T")


def merge(stored: TranscriptExcerpt, new: ConversationBundle) -> ConversationBundle:
    """``new`` appended to (or revising) the stored conversation, as one bundle."""
    messages = _merge_by(stored.messages, new.messages, lambda m: m.source_id)
    known_messages = {m.source_id for m in stored.messages}
    messages = _link_appended(messages, known_messages)
    calls = _merge_by(stored.tool_calls, new.tool_calls, lambda c: c.source_id)
    known_calls = {c.source_id for c in stored.tool_calls}
    calls = _attach_appended(calls, known_calls, messages)
    return replace(
        new,
        conversation=_merge_conversation(stored.conversation, new.conversation),
        messages=messages,
        tool_calls=calls,
        tasks=_merge_by(stored.tasks, new.tasks, lambda t: t.task_id),
        task_events=_merge_by(stored.task_events, new.task_events, lambda e: e.source_id),
        subagent_run=new.subagent_run or stored.subagent_run,
    )


def places_of(stored: TranscriptExcerpt | None, bundle: ConversationBundle) -> dict[SourceKey, int]:
    """The place of every message, tool call and task event of ``bundle``."""
    places: dict[SourceKey, int] = {}
    for kind, source_ids in _source_ids_by_kind(bundle):
        following = 0 if stored is None else stored.next_places[kind]
        for source_id in source_ids:
            known = None if stored is None else stored.places.get((kind, source_id))
            if known is None:
                known, following = following, following + 1
            places[(kind, source_id)] = known
    return places


def whole_excerpt(transcript: StoredTranscript) -> TranscriptExcerpt:
    """A whole stored conversation as an excerpt, each item placed at its index.

    ``merge`` over it is the reference an excerpt read from the store must agree with.
    """
    whole = ConversationBundle(
        conversation=transcript.summary.conversation,
        messages=transcript.messages,
        tool_calls=transcript.tool_calls,
        task_events=transcript.task_events,
    )
    by_kind = _source_ids_by_kind(whole)
    return TranscriptExcerpt(
        conversation=transcript.summary.conversation,
        redactions=transcript.summary.redactions,
        messages=transcript.messages,
        tool_calls=transcript.tool_calls,
        tasks=transcript.tasks,
        task_events=transcript.task_events,
        subagent_run=transcript.subagent_run,
        places={
            (kind, source_id): index
            for kind, source_ids in by_kind
            for index, source_id in enumerate(source_ids)
        },
        next_places={kind: len(source_ids) for kind, source_ids in by_kind},
    )


def _source_ids_by_kind(bundle: ConversationBundle) -> tuple[tuple[str, list[str]], ...]:
    return (
        ("message", [m.source_id for m in bundle.messages]),
        ("tool_call", [c.source_id for c in bundle.tool_calls]),
        ("task_event", [e.source_id for e in bundle.task_events]),
    )


def _merge_by(
    old: Sequence[_T], new: Sequence[_T], key: Callable[[_T], Hashable]
) -> tuple[_T, ...]:
    """Old items in order, each replaced by a new item with its key; other new ones appended."""
    merged = {key(item): item for item in old}
    for item in new:
        merged[key(item)] = item
    return tuple(merged.values())


def _link_appended(messages: tuple[Message, ...], known: set[str]) -> tuple[Message, ...]:
    """An appended message that names no parent answers the message before it."""
    linked: list[Message] = []
    for message in messages:
        if message.source_id not in known and message.parent_source_id is None and linked:
            message = replace(message, parent_source_id=linked[-1].source_id)
        linked.append(message)
    return tuple(linked)


def _attach_appended(
    calls: tuple[ToolCall, ...], known: set[str], messages: tuple[Message, ...]
) -> tuple[ToolCall, ...]:
    """An appended call that names no message belongs to the latest assistant message."""
    latest = next((m.source_id for m in reversed(messages) if m.role == "assistant"), None)
    return tuple(
        replace(call, message_source_id=latest)
        if call.source_id not in known and call.message_source_id is None
        else call
        for call in calls
    )


def _merge_conversation(old: Conversation, new: Conversation) -> Conversation:
    """Fields the new description leaves unset keep their stored values."""
    values = {f.name: getattr(new, f.name) for f in fields(Conversation)}
    for name, value in values.items():
        if value is None:
            values[name] = getattr(old, name)
    starts = [t for t in (old.started_at, new.started_at) if t is not None]
    ends = [t for t in (old.ended_at, new.ended_at) if t is not None]
    values["started_at"] = min(starts, default=None)
    values["ended_at"] = max(ends, default=None)
    values["attributes"] = {**old.attributes, **new.attributes}
    if new.parent_conversation_id is None:
        values["kind"] = old.kind  # a request without the sub-agent line keeps the kind
    return Conversation(**values)
