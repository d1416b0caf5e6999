"""Assembling a finished Codex session into a ``ConversationBundle``.

Owns the conversation header (ids, project hint, model, small attributes), the
``SubagentRun`` of a sub-agent session (from its own turns and, when the parent was read
in the same unit, from the parent's collaboration events), and the warnings about odd
but readable input that belong to this conversation.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from proctor.sources.codex._messages import IdRegistry
from proctor.sources.codex._records import as_dict, as_str
from proctor.sources.codex._session import ChildLink, SessionReader
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    SourceIssue,
    SubagentRun,
    ToolCall,
)


def build_bundle(session: SessionReader, link: ChildLink | None) -> ConversationBundle:
    """The bundle of one session; ``link`` is what its parent said about it, if known."""
    header = session.header
    ids = IdRegistry()
    placed = session.messages.build(ids)
    messages = tuple(message for message, _ in placed)
    goals: dict[str, str] = {}
    for message, turn_id in placed:
        if turn_id is not None and message.kind == "prompt" and turn_id not in goals:
            goals[turn_id] = message.text
    tool_calls = tuple(session.tools.build(ids, session.turns.aborted))
    tasks, task_events = session.turns.build(ids, goals)
    conversation = Conversation(
        conversation_id=f"codex:{header.session_id}",
        format="codex",
        external_id=header.session_id,
        title=session.title,
        kind=header.kind,
        parent_conversation_id=_parent_id(header.parent_session_id, header.session_id),
        project_hint=_basename(header.cwd),
        cwd=header.cwd,
        started_at=header.started_at or _first_time(messages),
        ended_at=session.ended_at,
        model=session.models[0] if session.models else _first_model(messages),
        attributes=_attributes(session),
    )
    run = None
    if header.kind == "subagent":
        run = _subagent_run(session, link, messages, tool_calls)
    return ConversationBundle(
        conversation=conversation,
        messages=messages,
        tool_calls=tool_calls,
        tasks=tuple(tasks),
        task_events=tuple(task_events),
        subagent_run=run,
        issues=tuple(_issues(session, ids)),
        origin=session.origin,
    )


def _parent_id(parent_session_id: str | None, session_id: str) -> str | None:
    if parent_session_id is None or parent_session_id == session_id:
        return None
    return f"codex:{parent_session_id}"


def _basename(cwd: str | None) -> str | None:
    if not cwd:
        return None
    path = PureWindowsPath(cwd) if "\\" in cwd and "/" not in cwd else PurePosixPath(cwd)
    return path.name or None


def _first_time(messages: tuple[Message, ...]) -> Any:
    return next((m.created_at for m in messages if m.created_at is not None), None)


def _first_model(messages: tuple[Message, ...]) -> str | None:
    return next((m.model for m in messages if m.model), None)


def _attributes(session: SessionReader) -> dict[str, Any]:
    header = session.header
    attributes = dict(header.attributes)
    if header.agent_role:
        attributes["agent_role"] = header.agent_role
    if header.agent_nickname:
        attributes["agent_nickname"] = header.agent_nickname
    if header.resumes:
        attributes["resumed"] = header.resumes
    if len(session.models) > 1:
        attributes["models"] = list(session.models)
    meter = session.tokens
    if meter.responses:
        total = meter.total
        attributes["usage"] = {
            "input_tokens": total.input_tokens,
            "cache_read_tokens": total.cache_read_tokens,
            "output_tokens": total.output_tokens,
            "reasoning_tokens": total.reasoning_tokens,
            "total_tokens": total.total_tokens,
        }
        attributes["model_responses"] = meter.responses
    if meter.duplicates:
        attributes["duplicate_token_counts"] = meter.duplicates
    if meter.context_window:
        attributes["model_context_window"] = meter.context_window
    if session.compactions:
        attributes["compactions"] = session.compactions
    return attributes


def _subagent_run(
    session: SessionReader,
    link: ChildLink | None,
    messages: tuple[Message, ...],
    tool_calls: tuple[ToolCall, ...],
) -> SubagentRun:
    header = session.header
    status, summary, stop_kind = _ending(session, link)
    parent_call = None
    if (
        link is not None
        and link.call_id
        and _parent_id(header.parent_session_id, header.session_id)
    ):
        parent_call = f"codex:{header.parent_session_id}:call:{link.call_id}"
    replies = sum(1 for m in messages if m.role == "assistant" and m.kind == "reply")
    started, ended = header.started_at or _first_time(messages), session.ended_at
    return SubagentRun(
        parent_tool_call_id=parent_call,
        agent_type=header.agent_role or (link.role if link else None),
        description=(link.prompt if link else None) or header.agent_nickname,
        status=status,
        summary=summary,
        rounds=session.tokens.responses or replies,
        total_tokens=session.tokens.total.total_tokens,
        tool_uses=len(tool_calls),
        rejected_tools=tuple(call.name for call in tool_calls if call.status == "rejected"),
        stop_kind=stop_kind,
        duration_ms=None
        if started is None or ended is None
        else max(int((ended - started).total_seconds() * 1000), 0),
    )


def _ending(
    session: SessionReader, link: ChildLink | None
) -> tuple[str | None, str | None, str | None]:
    """Status, final message and stop kind: the parent's view first, then the child's turns."""
    status = link.status if link is not None else None
    if isinstance(status, dict) and len(status) == 1:
        word, detail = next(iter(status.items()))
        detail_text = as_str(detail) or as_str(as_dict(detail).get("message"))
        kind = {"completed": "completed", "errored": "error"}.get(str(word), str(word))
        return kind, detail_text, kind
    if as_str(status) and status not in ("running", "pending_init"):
        return status, None, status
    if session.turns.last_ending is not None:
        stop_kind, final = session.turns.last_ending
        return stop_kind, final, stop_kind
    return as_str(status), None, None


def _issues(session: SessionReader, ids: IdRegistry) -> list[SourceIssue]:
    """Warnings about odd input in this session, each counted once with its first line."""
    path, session_id = session.origin, session.header.session_id
    tools = session.tools
    found = []
    for lines, reason in (
        (tools.raw_arguments, "tool calls whose arguments are not JSON; kept as raw text"),
        (
            tools.repeated_calls,
            "tool calls reuse a call_id already taken; merged into the first call",
        ),
        (
            tools.repeated_outputs,
            "tool outputs repeat a call_id already answered; the first output was kept",
        ),
        (
            tools.orphan_outputs(),
            "tool outputs have no matching call; kept as calls of an unknown tool",
        ),
    ):
        if lines:
            found.append(
                SourceIssue(
                    path, f"session {session_id}: {len(lines)} {reason}", lines[0], "warning"
                )
            )
    if ids.collisions:
        found.append(
            SourceIssue(
                path,
                f"session {session_id}: {ids.collisions} items repeat an id or ordinal of an earlier "
                "item; they were given positional ids",
                severity="warning",
            )
        )
    header = session.header
    if header.parent_session_id is not None and header.parent_session_id == header.session_id:
        found.append(
            SourceIssue(
                path,
                f"session {session_id} names itself as its parent; the sub-agent link was left out",
                severity="warning",
            )
        )
    return found
