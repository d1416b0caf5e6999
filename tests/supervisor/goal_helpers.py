"""Shared steps of the goal tests: harness messages, storing, tracking, the rule trace."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
from sqlalchemy import text

from proctor.models import ModelCaller
from proctor.rules import Trace, TraceContext
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.supervisor._goal_tracking import GoalUpdate, track_goals
from proctor.transcript import Message, MessageKind
from tests.backends import raw_connection
from tests.builders import T0
from tests.supervisor.builders import Chat


def harness(chat: Chat, kind: MessageKind, text: str, *, derived: bool = False) -> str:
    """A user-role message the person did not type (injected text, a summary, a notice)."""
    source_id = f"{chat.conversation_id}:m{len(chat.messages)}"
    chat.messages.append(Message(source_id, "user", kind, text, created_at=T0, derived=derived))
    return source_id


def save(store: SqlStore, chat: Chat, *, kind: str = "main", parent: str | None = None) -> None:
    """Write the conversation as it is now (again, when it grew)."""
    bundle = chat.bundle()
    if kind != "main":
        conversation = dataclasses.replace(
            bundle.conversation, kind=kind, parent_conversation_id=parent
        )
        bundle = dataclasses.replace(bundle, conversation=conversation)
    store.write_conversation(prepare_bundle(bundle))


def track(store: SqlStore, chat: Chat, caller: ModelCaller | None = None) -> GoalUpdate:
    """Store the conversation and run goal tracking once."""
    save(store, chat)
    return track_stored(store, chat.conversation_id, caller)


def track_stored(
    store: SqlStore, conversation_id: str, caller: ModelCaller | None = None
) -> GoalUpdate:
    """Run goal tracking once over a stored conversation."""

    async def run() -> GoalUpdate:
        return await track_goals(store, conversation_id, caller=caller)

    return anyio.run(run)


def trace_of(store: SqlStore, conversation_id: str) -> Trace:
    """The rule trace of a stored conversation."""
    transcript = store.transcript(conversation_id)
    return Trace.from_parts(
        TraceContext(conversation_id=conversation_id), transcript.messages, transcript.tool_calls
    )


def row_counts(database: Path) -> tuple[int, int]:
    """Rows in goal_versions and intent_labels, read straight from the database."""
    with raw_connection(database) as connection:
        versions = connection.execute(text("select count(*) from goal_versions")).scalar_one()
        labels = connection.execute(text("select count(*) from intent_labels")).scalar_one()
    return int(versions), int(labels)
