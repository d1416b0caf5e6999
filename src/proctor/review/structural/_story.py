"""One deterministic story line per conversation, summarised by what structure shows.

The line's id is a UUIDv5 of the conversation id, so every review that sees the
conversation adds to the same line (``must_exist=False``: the publish creates it the
first time). A sub-agent's line is a sub-thread of its parent's line when the parent
conversation is known to this review.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from proctor.graph import EventFact, StoryLineFact
from proctor.review.structural._requests import is_readable
from proctor.transcript import Conversation

STORY_LINE_NAMESPACE = uuid.UUID("0d5c1a3e-6f1b-5d0e-8a8e-5f0c9e1b7a42")
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def story_line_key(conversation_id: str) -> str:
    """The key of a conversation's story line within a draft."""
    return f"conversation:{conversation_id}"


def story_line_id(conversation_id: str) -> str:
    """The id of a conversation's story line: the same conversation, the same line."""
    return str(uuid.uuid5(STORY_LINE_NAMESPACE, conversation_id))


def conversation_story_lines(
    events: Sequence[EventFact], conversations: Mapping[str, Conversation]
) -> list[StoryLineFact]:
    """A story line per conversation that has events, its events in time order.

    A parent conversation without events of its own still gets a (summary-less) line
    when a sub-agent's line hangs under it, so the sub-thread has somewhere to go.
    """
    by_conversation: dict[str, list[EventFact]] = {}
    for event in events:
        by_conversation.setdefault(event.conversation_id, []).append(event)
    wanted = list(by_conversation)
    for conversation_id in list(wanted):
        parent = _parent(conversation_id, conversations)
        if parent is not None and parent not in by_conversation:
            by_conversation[parent] = []
            wanted.insert(0, parent)
    lines: list[StoryLineFact] = []
    for conversation_id in wanted:
        ordered = sorted(by_conversation[conversation_id], key=lambda e: e.occurred_at or _EARLIEST)
        parent = _parent(conversation_id, conversations)
        lines.append(
            StoryLineFact(
                key=story_line_key(conversation_id),
                title=_title(conversation_id, conversations.get(conversation_id)),
                summary=activity_summary(ordered),
                event_ids=tuple(e.event_id for e in ordered),
                story_line_id=story_line_id(conversation_id),
                parent_key=None if parent is None else story_line_key(parent),
                must_exist=False,
            )
        )
    return lines


def _parent(conversation_id: str, conversations: Mapping[str, Conversation]) -> str | None:
    conversation = conversations.get(conversation_id)
    parent = None if conversation is None else conversation.parent_conversation_id
    return parent if parent is not None and parent in conversations else None


def _title(conversation_id: str, conversation: Conversation | None) -> str:
    """The conversation's title, or (none, or only a redaction placeholder such as a
    sanitised log's ``[REDACTED_TEXT len=32 sha=…]``) its session id and folder."""
    if conversation is not None and conversation.title and is_readable(conversation.title):
        return " ".join(conversation.title.split())
    short_id = (conversation.external_id if conversation else conversation_id)[:8]
    where = f" in {conversation.cwd}" if conversation is not None and conversation.cwd else ""
    return f"Session {short_id}{where}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


_COUNTED = (
    ("error", "error", "errors"),
    ("commit", "commit", "commits"),
    ("package_install", "package installed", "packages installed"),
    ("url_fetch", "URL fetched", "URLs fetched"),
    ("subagent_run", "sub-agent run", "sub-agent runs"),
    ("task_status", "task update", "task updates"),
)
_FILE_VERBS = (("file_edit", "edited"), ("file_create", "created"), ("file_read", "read"))


def activity_summary(events: Sequence[EventFact]) -> str:
    """``12 commands (2 failed), 5 files edited, tests: failing → passing`` (time order).

    One pass over the events (a first review summarises every batch and every
    conversation's line)."""
    runs = failed = 0
    files: dict[str, set[str]] = {kind: set() for kind, _ in _FILE_VERBS}
    counts = dict.fromkeys((kind for kind, _, _ in _COUNTED), 0)
    states: list[str] = []
    for event in events:
        kind = event.kind
        if kind == "command" or kind == "test_run":
            runs += 1
            failed += event.outcome == "failed"
            if kind == "test_run" and event.outcome != "unknown":
                state = "passing" if event.outcome == "ok" else "failing"
                if not states or states[-1] != state:
                    states.append(state)
        elif kind in files:
            if event.entity_ids:
                files[kind].add(event.entity_ids[0])
        elif kind in counts:
            counts[kind] += 1
    parts: list[str] = []
    if runs:
        parts.append(_plural(runs, "command") + (f" ({failed} failed)" if failed else ""))
    for file_kind, noun in _FILE_VERBS:
        if files[file_kind]:
            parts.append(f"{_plural(len(files[file_kind]), 'file')} {noun}")
    if states:
        parts.append("tests: " + " → ".join(states))
    for counted, one, many in _COUNTED:
        count = counts[counted]
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    return ", ".join(parts) if parts else "no structural events"
