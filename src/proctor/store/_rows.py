"""Conversion between domain values and table rows, in both directions."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from proctor.transcript import (
    Conversation,
    Message,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
    canonical_time,
)

Row = dict[str, Any]


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


def message_row(message: Message, conversation_id: str, seq: int) -> Row:
    """A ``messages`` row."""
    usage = message.usage
    return {
        "source_id": message.source_id,
        "conversation_id": conversation_id,
        "seq": seq,
        "parent_source_id": message.parent_source_id,
        "role": message.role,
        "kind": message.kind,
        "author": message.author,
        "text": message.text,
        "created_at": message.created_at,
        "on_active_branch": message.on_active_branch,
        "derived": message.derived,
        "model": message.model,
        "input_tokens": None if usage is None else usage.input_tokens,
        "output_tokens": None if usage is None else usage.output_tokens,
        "cache_read_tokens": None if usage is None else usage.cache_read_tokens,
        "cache_write_tokens": None if usage is None else usage.cache_write_tokens,
        "reasoning_tokens": None if usage is None else usage.reasoning_tokens,
        "attributes": dict(message.attributes),
    }


def tool_call_row(call: ToolCall, conversation_id: str, seq: int) -> Row:
    """A ``tool_calls`` row."""
    return {
        "source_id": call.source_id,
        "conversation_id": conversation_id,
        "seq": seq,
        "message_source_id": call.message_source_id,
        "call_id": call.call_id,
        "name": call.name,
        "arguments": call.arguments,
        "status": call.status,
        "exit_code": call.exit_code,
        "result_text": call.result_text,
        "result_size": call.result_size,
        "created_at": call.created_at,
        "completed_at": call.completed_at,
        "on_active_branch": call.on_active_branch,
        "attributes": dict(call.attributes),
    }


def task_event_row(event: TaskEvent, conversation_id: str, seq: int) -> Row:
    """A ``task_events`` row."""
    return {
        "source_id": event.source_id,
        "conversation_id": conversation_id,
        "seq": seq,
        "task_id": event.task_id,
        "kind": event.kind,
        "status": event.status,
        "text": event.text,
        "created_at": event.created_at,
        "attributes": dict(event.attributes),
    }


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
