"""Conversion between domain values and table rows, in both directions."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from proctor.transcript import (
    Conversation,
    Message,
    PreparedBundle,
    SourceIssue,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
    canonical_time,
)

Row = dict[str, Any]

SourceRow = tuple[str, str, str, str, int, int, Any, tuple[Any, ...]]
"""One source to write: its type, id, fingerprint, content hash, redactions, place
(``seq``), time (``occurred_at``) and the values of its content row (``MESSAGE_COLUMNS``,
``TOOL_CALL_COLUMNS`` or ``TASK_EVENT_COLUMNS``)."""


@dataclass(frozen=True, slots=True)
class ConversationRows:
    """A prepared conversation as the writer takes it (``conversation_rows``): its
    header's parts and one ``SourceRow`` per prepared source.

    Plain tuples of plain values: a worker process's conversations reach the writing
    process by pickle without a Python call per message or tool call, and the writer
    binds them without a dict per row."""

    conversation: Conversation
    sources: tuple[SourceRow, ...]
    tasks: tuple[Task, ...] = ()
    subagent_run: SubagentRun | None = None
    origin: str | None = None
    issues: tuple[SourceIssue, ...] = ()
    redactions: int = 0
    redactions_by_kind: Mapping[str, int] = field(default_factory=dict)
    truncated: int = 0
    reasoning_removed: int = 0
    messages: int = 0
    """Messages of the bundle (written or not)."""
    tool_calls: int = 0
    """Tool calls of the bundle (written or not)."""
    append: bool = False
    """Only some of the conversation's sources, at the places given (a live append):
    the stored sources are read by id, not by conversation."""

    @property
    def conversation_id(self) -> str:
        """Shortcut for ``conversation.conversation_id``."""
        return self.conversation.conversation_id


def conversation_rows(
    prepared: PreparedBundle, places: Mapping[tuple[str, str], int] | None = None
) -> ConversationRows:
    """The rows of ``prepared`` (``ConversationRows``).

    ``places``: the ``seq`` of each of the bundle's sources, for an append that carries
    only part of the conversation (default: each source's index in the bundle). Only
    the prepared sources get a row (the bundle's other items are context); where two
    items share a source id, the last one's row is every such source's.
    """
    bundle = prepared.bundle
    conversation_id = bundle.conversation_id
    written = {(s.source_type, s.source_id) for s in prepared.sources}
    content: dict[tuple[str, str], tuple[int, Any, tuple[Any, ...]]] = {}
    for index, message in enumerate(bundle.messages):
        key = ("message", message.source_id)
        if key in written:
            seq = index if places is None else places[key]
            content[key] = (
                seq,
                message.created_at,
                message_values(message, conversation_id, seq),
            )
    for index, call in enumerate(bundle.tool_calls):
        key = ("tool_call", call.source_id)
        if key in written:
            seq = index if places is None else places[key]
            content[key] = (seq, call.created_at, tool_call_values(call, conversation_id, seq))
    for index, event in enumerate(bundle.task_events):
        key = ("task_event", event.source_id)
        if key in written:
            seq = index if places is None else places[key]
            content[key] = (seq, event.created_at, task_event_values(event, conversation_id, seq))
    return ConversationRows(
        conversation=bundle.conversation,
        sources=tuple(
            (
                s.source_type,
                s.source_id,
                s.fingerprint,
                s.content_hash,
                s.redactions,
                *content[(s.source_type, s.source_id)],
            )
            for s in prepared.sources
        ),
        tasks=bundle.tasks,
        subagent_run=bundle.subagent_run,
        origin=bundle.origin,
        issues=bundle.issues,
        redactions=prepared.redactions,
        redactions_by_kind=prepared.redactions_by_kind,
        truncated=prepared.truncated,
        reasoning_removed=prepared.reasoning_removed,
        messages=len(bundle.messages),
        tool_calls=len(bundle.tool_calls),
        append=places is not None,
    )


def header_hash(conversation: Conversation, project_id: str, redactions: int) -> str:
    """Hash of a conversation header, to tell whether re-importing changed it."""
    payload = (
        project_id,
        conversation.format,
        conversation.external_id,
        conversation.kind,
        conversation.parent_conversation_id,
        conversation.title,
        conversation.cwd,
        conversation.model,
        canonical_time(conversation.started_at),
        canonical_time(conversation.ended_at),
        conversation.attributes,
        redactions,
    )
    data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def conversation_row(conversation: Conversation, project_id: str) -> Row:
    """Columns of ``conversations`` that come from the conversation itself."""
    return {
        "conversation_id": conversation.conversation_id,
        "project_id": project_id,
        "format": conversation.format,
        "external_id": conversation.external_id,
        "kind": conversation.kind,
        "parent_conversation_id": conversation.parent_conversation_id,
        "title": conversation.title,
        "cwd": conversation.cwd,
        "model": conversation.model,
        "started_at": conversation.started_at,
        "ended_at": conversation.ended_at,
        "attributes": dict(conversation.attributes),
    }


MESSAGE_COLUMNS = (
    "source_id",
    "conversation_id",
    "seq",
    "parent_source_id",
    "role",
    "kind",
    "author",
    "text",
    "created_at",
    "on_active_branch",
    "derived",
    "model",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "attributes",
)
"""The columns of a ``messages`` row (``message_values``), in the table's order."""


def message_values(message: Message, conversation_id: str, seq: int) -> tuple[Any, ...]:
    """A ``messages`` row: the values of ``MESSAGE_COLUMNS``."""
    usage = message.usage
    if usage is None:
        tokens: tuple[int | None, ...] = (None, None, None, None, None)
    else:
        tokens = (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.reasoning_tokens,
        )
    return (
        message.source_id,
        conversation_id,
        seq,
        message.parent_source_id,
        message.role,
        message.kind,
        message.author,
        message.text,
        message.created_at,
        message.on_active_branch,
        message.derived,
        message.model,
        *tokens,
        dict(message.attributes),
    )


TOOL_CALL_COLUMNS = (
    "source_id",
    "conversation_id",
    "seq",
    "message_source_id",
    "call_id",
    "name",
    "arguments",
    "status",
    "exit_code",
    "result_text",
    "result_size",
    "created_at",
    "completed_at",
    "on_active_branch",
    "attributes",
)
"""The columns of a ``tool_calls`` row (``tool_call_values``), in the table's order."""


def tool_call_values(call: ToolCall, conversation_id: str, seq: int) -> tuple[Any, ...]:
    """A ``tool_calls`` row: the values of ``TOOL_CALL_COLUMNS``."""
    return (
        call.source_id,
        conversation_id,
        seq,
        call.message_source_id,
        call.call_id,
        call.name,
        call.arguments,
        call.status,
        call.exit_code,
        call.result_text,
        call.result_size,
        call.created_at,
        call.completed_at,
        call.on_active_branch,
        dict(call.attributes),
    )


TASK_EVENT_COLUMNS = (
    "source_id",
    "conversation_id",
    "seq",
    "task_id",
    "kind",
    "status",
    "text",
    "created_at",
    "attributes",
)
"""The columns of a ``task_events`` row (``task_event_values``), in the table's order."""


def task_event_values(event: TaskEvent, conversation_id: str, seq: int) -> tuple[Any, ...]:
    """A ``task_events`` row: the values of ``TASK_EVENT_COLUMNS``."""
    return (
        event.source_id,
        conversation_id,
        seq,
        event.task_id,
        event.kind,
        event.status,
        event.text,
        event.created_at,
        dict(event.attributes),
    )


def task_row(task: Task, conversation_id: str, seq: int) -> Row:
    """A ``tasks`` row."""
    return {
        "task_id": task.task_id,
        "conversation_id": conversation_id,
        "seq": seq,
        "title": task.title,
        "goal": task.goal,
        "status": task.status,
        "created_at": task.created_at,
        "completed_at": task.completed_at,
        "attributes": dict(task.attributes),
    }


def subagent_row(run: SubagentRun, conversation_id: str) -> Row:
    """A ``subagent_runs`` row."""
    return {
        "conversation_id": conversation_id,
        "parent_tool_call_id": run.parent_tool_call_id,
        "agent_type": run.agent_type,
        "description": run.description,
        "status": run.status,
        "summary": run.summary,
        "rounds": run.rounds,
        "total_tokens": run.total_tokens,
        "tool_uses": run.tool_uses,
        "rejected_tools": list(run.rejected_tools),
        "stop_kind": run.stop_kind,
        "duration_ms": run.duration_ms,
    }


def conversation_from_row(row: Any) -> Conversation:
    """Rebuild a ``Conversation``."""
    return Conversation(
        conversation_id=row["conversation_id"],
        format=row["format"],
        external_id=row["external_id"],
        title=row["title"],
        kind=row["kind"],
        parent_conversation_id=row["parent_conversation_id"],
        cwd=row["cwd"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        model=row["model"],
        attributes=row["attributes"] or {},
    )


def message_from_row(row: Any) -> Message:
    """Rebuild a ``Message``."""
    usage = None
    if row["input_tokens"] is not None:
        usage = Usage(
            row["input_tokens"],
            row["output_tokens"] or 0,
            row["cache_read_tokens"] or 0,
            row["cache_write_tokens"] or 0,
            row["reasoning_tokens"] or 0,
        )
    return Message(
        source_id=row["source_id"],
        role=row["role"],
        kind=row["kind"],
        text=row["text"],
        created_at=row["created_at"],
        parent_source_id=row["parent_source_id"],
        on_active_branch=bool(row["on_active_branch"]),
        derived=bool(row["derived"]),
        author=row["author"],
        model=row["model"],
        usage=usage,
        attributes=row["attributes"] or {},
    )


def tool_call_from_row(row: Any) -> ToolCall:
    """Rebuild a ``ToolCall``."""
    return ToolCall(
        source_id=row["source_id"],
        name=row["name"],
        arguments=row["arguments"],
        call_id=row["call_id"],
        message_source_id=row["message_source_id"],
        status=row["status"],
        result_text=row["result_text"],
        result_size=row["result_size"],
        exit_code=row["exit_code"],
        created_at=row["created_at"],
        completed_at=row["completed_at"],
        on_active_branch=bool(row["on_active_branch"]),
        attributes=row["attributes"] or {},
    )


def task_from_row(row: Any) -> Task:
    """Rebuild a ``Task``."""
    return Task(
        task_id=row["task_id"],
        title=row["title"],
        goal=row["goal"],
        status=row["status"],
        created_at=row["created_at"],
        completed_at=row["completed_at"],
        attributes=row["attributes"] or {},
    )


def task_event_from_row(row: Any) -> TaskEvent:
    """Rebuild a ``TaskEvent``."""
    return TaskEvent(
        source_id=row["source_id"],
        kind=row["kind"],
        text=row["text"],
        task_id=row["task_id"],
        status=row["status"],
        created_at=row["created_at"],
        attributes=row["attributes"] or {},
    )


def subagent_from_row(row: Any) -> SubagentRun:
    """Rebuild a ``SubagentRun``."""
    return SubagentRun(
        parent_tool_call_id=row["parent_tool_call_id"],
        agent_type=row["agent_type"],
        description=row["description"],
        status=row["status"],
        summary=row["summary"],
        rounds=row["rounds"],
        total_tokens=row["total_tokens"],
        tool_uses=row["tool_uses"],
        rejected_tools=tuple(row["rejected_tools"] or ()),
        stop_kind=row["stop_kind"],
        duration_ms=row["duration_ms"],
    )
