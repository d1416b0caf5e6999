"""Assembling validated lines into conversation bundles.

Lines of several conversations may be interleaved and a tool result may come any
number of lines after its call, so lines are collected per conversation first and
bundles are built at the end. Two kinds of line:

- *events* (``message``, ``tool_call``, ``tool_result``, ``task_event``) are whole: a
  later line with the same id replaces the earlier one. That is a revision; in the
  store the source keeps its id and gets a new version fingerprint.
- *descriptions* (``conversation``, ``task``, ``subagent_run``) are updates: a later
  line changes only the fields it sets.

Producer ids are namespaced by Proctor (``pj:<conversation_id>:msg:<message_id>`` …);
``:`` and ``%`` inside a producer id are percent-encoded so two different id pairs can
never build the same namespaced id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from proctor.sources.jsonl._schema import (
    ConversationLine,
    EventLine,
    MessageLine,
    SubagentRunLine,
    TaskEventLine,
    TaskLine,
    ToolCallLine,
    ToolResultLine,
)
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    MessageKind,
    SourceIssue,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
)

_DEFAULT_KINDS: dict[str, MessageKind] = {
    "user": "prompt",
    "assistant": "reply",
    "system": "instructions",
    "developer": "instructions",
    "tool": "injected",
}


def quote_id(value: str) -> str:
    """A producer id made safe to join with ``:``."""
    return value.replace("%", "%25").replace(":", "%3A")


def conversation_source_id(conversation_id: str) -> str:
    """``pj:<conversation_id>``."""
    return f"pj:{quote_id(conversation_id)}"


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


@dataclass(slots=True)
class _Lined:
    """A validated line and the line number it came from."""

    line: int
    value: Any


@dataclass(slots=True)
class _ConversationLines:
    conversation_id: str
    description: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, _Lined] = field(default_factory=dict)
    calls: dict[str, _Lined] = field(default_factory=dict)
    default_message: dict[str, str | None] = field(default_factory=dict)
    """For each call without ``message_id``: the latest assistant message before it."""
    results: dict[str, _Lined] = field(default_factory=dict)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: dict[str, _Lined] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    run_line: int | None = None
    latest_assistant: str | None = None

    @property
    def prefix(self) -> str:
        return conversation_source_id(self.conversation_id)


def _updates(line: BaseModel) -> dict[str, Any]:
    """Fields a description line sets (explicitly), without its type and conversation."""
    return line.model_dump(exclude_unset=True, exclude={"type", "conversation_id"})


class Assembler:
    """Collects one file's lines and builds its bundles."""

    def __init__(self, path: str, producer: str | None = None) -> None:
        self.path = path
        self.producer = producer
        self._conversations: dict[str, _ConversationLines] = {}

    def _lines_of(self, conversation_id: str) -> _ConversationLines:
        found = self._conversations.get(conversation_id)
        if found is None:
            found = self._conversations[conversation_id] = _ConversationLines(conversation_id)
        return found

    def add(self, line: int, event: EventLine) -> None:
        """Take one validated event line."""
        lines = self._lines_of(event.conversation_id)
        match event:
            case ConversationLine():
                lines.description.update(_updates(event))
            case MessageLine():
                lines.messages[event.message_id] = _Lined(line, event)
                if event.role == "assistant":
                    lines.latest_assistant = event.message_id
            case ToolCallLine():
                lines.calls[event.call_id] = _Lined(line, event)
                lines.default_message[event.call_id] = lines.latest_assistant
            case ToolResultLine():
                lines.results[event.call_id] = _Lined(line, event)
            case TaskLine():
                task = lines.tasks.setdefault(event.task_id, {"line": line})
                task.update(_updates(event))
            case TaskEventLine():
                lines.events[event.event_id] = _Lined(line, event)
            case SubagentRunLine():
                lines.run.update(_updates(event))
                lines.run_line = lines.run_line or line

    def bundles(self) -> list[ConversationBundle]:
        """Every conversation seen, parents before their sub-agents."""
        built = [self._bundle(lines) for lines in self._conversations.values()]
        return sorted(built, key=lambda b: b.conversation.kind == "subagent")

    def _warn(self, issues: list[SourceIssue], line: int | None, reason: str) -> None:
        issues.append(SourceIssue(self.path, reason, line, severity="warning"))

    def _bundle(self, lines: _ConversationLines) -> ConversationBundle:
        issues: list[SourceIssue] = []
        messages = self._messages(lines, issues)
        tool_calls = self._tool_calls(lines, issues)
        tasks = [self._task(lines, task_id, fields) for task_id, fields in lines.tasks.items()]
        events = [self._task_event(lines, lined, issues) for lined in lines.events.values()]
        run = self._subagent_run(lines, issues)
        described = lines.description
        times = [m.created_at for m in messages if m.created_at is not None]
        attributes = dict(described.get("attributes") or {})
        if self.producer is not None:
            attributes.setdefault("producer", self.producer)
        conversation = Conversation(
            conversation_id=lines.prefix,
            format="proctor_jsonl",
            external_id=lines.conversation_id,
            title=described.get("title"),
            kind="main" if run is None else "subagent",
            parent_conversation_id=(
                None if run is None else conversation_source_id(lines.run["parent_conversation_id"])
            ),
            project_hint=described.get("project"),
            cwd=described.get("cwd"),
            started_at=_utc(described.get("started_at")) or min(times, default=None),
            ended_at=_utc(described.get("ended_at")) or max(times, default=None),
            model=described.get("model") or next((m.model for m in messages if m.model), None),
            attributes=attributes,
        )
        return ConversationBundle(
            conversation=conversation,
            messages=tuple(messages),
            tool_calls=tuple(tool_calls),
            tasks=tuple(tasks),
            task_events=tuple(events),
            subagent_run=run,
            issues=tuple(issues),
            origin=self.path,
        )

    def _messages(self, lines: _ConversationLines, issues: list[SourceIssue]) -> list[Message]:
        messages: list[Message] = []
        previous: str | None = None
        for message_id, lined in lines.messages.items():
            line: MessageLine = lined.value
            source_id = f"{lines.prefix}:msg:{quote_id(message_id)}"
            parent = previous
            if line.parent_message_id is not None:
                parent = f"{lines.prefix}:msg:{quote_id(line.parent_message_id)}"
                if line.parent_message_id not in lines.messages:
                    self._warn(
                        issues,
                        lined.line,
                        f'message "{message_id}": parent_message_id "{line.parent_message_id}" '
                        "is not in this file; the link is kept",
                    )
            parts = [line.text] if line.text else []
            parts += [_placeholder(a.media_type, a.size_bytes, a.name) for a in line.attachments]
            usage = None if line.usage is None else Usage(**line.usage.model_dump())
            messages.append(
                Message(
                    source_id=source_id,
                    role=line.role,
                    kind=line.kind or _DEFAULT_KINDS[line.role],
                    text="\n\n".join(parts),
                    created_at=_utc(line.created_at),
                    parent_source_id=parent,
                    author=line.author,
                    model=line.model,
                    usage=usage,
                    attributes=dict(line.attributes or {}),
                )
            )
            previous = source_id
        return messages

    def _tool_calls(self, lines: _ConversationLines, issues: list[SourceIssue]) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for call_id, lined in lines.calls.items():
            call: ToolCallLine = lined.value
            result_lined = lines.results.get(call_id)
            result: ToolResultLine | None = None if result_lined is None else result_lined.value
            message_id = call.message_id or lines.default_message.get(call_id)
            if call.message_id is not None and call.message_id not in lines.messages:
                self._warn(
                    issues,
                    lined.line,
                    f'tool call "{call_id}": message_id "{call.message_id}" is not in this file; '
                    "the link is kept",
                )
            attributes = dict(call.attributes or {})
            if result is not None:
                attributes.update(result.attributes or {})
            calls.append(
                ToolCall(
                    source_id=f"{lines.prefix}:call:{quote_id(call_id)}",
                    name=call.name,
                    arguments=call.arguments if call.arguments is not None else {},
                    call_id=call_id,
                    message_source_id=(
                        None if message_id is None else f"{lines.prefix}:msg:{quote_id(message_id)}"
                    ),
                    status="pending" if result is None else result.status,
                    result_text=None if result is None else result.output,
                    exit_code=None if result is None else result.exit_code,
                    created_at=_utc(call.created_at),
                    completed_at=None if result is None else _utc(result.completed_at),
                    attributes=attributes,
                )
            )
        for call_id, lined in lines.results.items():
            if call_id not in lines.calls:
                self._warn(
                    issues,
                    lined.line,
                    f'tool_result for call "{call_id}" has no tool_call line in this file; '
                    "the result was skipped (send the tool_call line too)",
                )
        return calls

    def _task(self, lines: _ConversationLines, task_id: str, fields: dict[str, Any]) -> Task:
        return Task(
            task_id=f"{lines.prefix}:task:{quote_id(task_id)}",
            title=fields.get("title") or task_id,
            goal=fields.get("goal"),
            status=fields.get("status") or "open",
            created_at=_utc(fields.get("created_at")),
            completed_at=_utc(fields.get("completed_at")),
            attributes=dict(fields.get("attributes") or {}),
        )

    def _task_event(
        self, lines: _ConversationLines, lined: _Lined, issues: list[SourceIssue]
    ) -> TaskEvent:
        event: TaskEventLine = lined.value
        if event.task_id is not None and event.task_id not in lines.tasks:
            self._warn(
                issues,
                lined.line,
                f'task_event "{event.event_id}": task "{event.task_id}" has no task line in '
                "this file; the link is kept",
            )
        return TaskEvent(
            source_id=f"{lines.prefix}:event:{quote_id(event.event_id)}",
            kind=event.kind,
            text=event.text,
            task_id=None
            if event.task_id is None
            else f"{lines.prefix}:task:{quote_id(event.task_id)}",
            status=event.status,
            created_at=_utc(event.created_at),
            attributes=dict(event.attributes or {}),
        )

    def _subagent_run(
        self, lines: _ConversationLines, issues: list[SourceIssue]
    ) -> SubagentRun | None:
        run = lines.run
        if not run:
            return None
        parent_id: str = run["parent_conversation_id"]
        parent = self._conversations.get(parent_id)
        call_id: str | None = run.get("parent_call_id")
        if parent is None:
            self._warn(
                issues,
                lines.run_line,
                f'subagent_run: parent conversation "{parent_id}" is not in this file; '
                "the link is kept",
            )
        elif call_id is not None and call_id not in parent.calls:
            self._warn(
                issues,
                lines.run_line,
                f'subagent_run: parent_call_id "{call_id}" is not a tool_call of conversation '
                f'"{parent_id}" in this file; the link is kept',
            )
        return SubagentRun(
            parent_tool_call_id=(
                None
                if call_id is None
                else f"{conversation_source_id(parent_id)}:call:{quote_id(call_id)}"
            ),
            agent_type=run.get("agent_type"),
            description=run.get("description"),
            status=run.get("status"),
            summary=run.get("summary"),
            rounds=run.get("rounds") or 0,
            total_tokens=run.get("total_tokens") or 0,
            tool_uses=run.get("tool_uses") or 0,
            rejected_tools=tuple(run.get("rejected_tools") or ()),
            stop_kind=run.get("stop_kind"),
            duration_ms=run.get("duration_ms"),
        )


def _placeholder(media_type: str, size: int, name: str | None) -> str:
    """``[image: image/png, 12345 bytes]`` for an attachment."""
    family = media_type.split("/", 1)[0]
    label = family if family in ("image", "audio", "video") else "file"
    named = f", {name}" if name else ""
    return f"[{label}: {media_type}, {size} bytes{named}]"
