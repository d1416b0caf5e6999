"""Turn a replayed Gemini CLI session into a ``ConversationBundle``.

Ids: the conversation is ``gemini:<sessionId>``, a message ``gemini:<sessionId>:msg:<id>``
and a tool call ``gemini:<sessionId>:tool:<toolCall id>`` (research §4: the tool result
lives inside the calling message and becomes its own source). Files without a session id
(raw API history) get a content hash instead of the session id.

``gemini`` messages become replies with model and usage (``thoughts`` token counts kept
as reasoning tokens, the ``thoughts`` themselves dropped); ``info``, ``error`` and
``warning`` messages are harness notices. Sub-agent sessions (``kind: "subagent"``) become
sub-agent conversations linked to their parent session.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from proctor.sources._common import (
    CallLedger,
    Located,
    as_count,
    as_object,
    as_text,
    content_digest,
    parse_arguments,
    parse_time,
)
from proctor.sources.gemini_cli._parts import (
    exit_code_of,
    response_text,
    result_text,
    split_content,
)
from proctor.sources.gemini_cli._replay import MESSAGE_TYPES, LoggedMessage, SessionLog
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    MessageKind,
    Role,
    SourceIssue,
    SubagentRun,
    ToolCall,
    ToolStatus,
    Usage,
)

FORMAT = "gemini_cli"
NOTICE_TYPES = frozenset({"info", "error", "warning"})

_KINDS: dict[Any, tuple[Role, MessageKind]] = {
    "user": ("user", "prompt"),
    "gemini": ("assistant", "reply"),
}
_STATUS: dict[str, ToolStatus] = {"success": "ok", "error": "error", "cancelled": "interrupted"}


def gemini_usage(tokens: Any) -> Usage | None:
    """Usage of one response from Gemini CLI's ``tokens`` summary.

    ``input`` includes cached tokens; ``thoughts`` and ``tool`` (tool-use prompt) tokens
    are counted apart from ``input``/``output`` by Gemini, so they are added here for the
    total to match ``total``.
    """
    if not isinstance(tokens, dict):
        return None
    cached = as_count(tokens.get("cached"))
    thoughts = as_count(tokens.get("thoughts"))
    return Usage(
        input_tokens=max(as_count(tokens.get("input")) - cached, 0) + as_count(tokens.get("tool")),
        output_tokens=as_count(tokens.get("output")) + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def tool_status(record: dict[str, Any], result: str | None) -> ToolStatus:
    """Status of a tool call record; a cancel the user chose is a rejection."""
    status = _STATUS.get(str(record.get("status")))
    if status == "interrupted" and "did not allow" in (result or ""):
        return "rejected"
    if status is None:
        return "ok" if result is not None and record.get("status") is None else "pending"
    return status


class _SessionBuilder:
    """Collects one session's messages and tool calls."""

    def __init__(self, file: str, conversation_id: str) -> None:
        self.file = file
        self.conversation_id = conversation_id
        self.messages: list[Message] = []
        self.ledger = CallLedger()
        self.issues: list[SourceIssue] = []

    def message_id(self, key: str | None) -> str | None:
        return None if key is None else f"{self.conversation_id}:msg:{key}"

    def add(self, key: str, logged: LoggedMessage) -> None:
        """Add one replayed message with the tool calls it made and the results it carries."""
        record, where = logged.record, logged.where
        kind = "gemini" if record.get("type") == "model" else record.get("type")
        if not isinstance(kind, str) or kind not in MESSAGE_TYPES:
            self.warn(where, f"unknown message type {kind!r:.60}; kept as a notice")
            kind = kind if isinstance(kind, str) else "notice"
        source_id = f"{self.conversation_id}:msg:{key}"
        content = split_content(record.get("content", record.get("parts")))
        for response in content.responses:
            self._complete(where, response, source_id)
        if kind == "user" and not content.text and content.responses:
            return  # only function responses: results of earlier calls, not a prompt
        is_reply = kind == "gemini"
        role, message_kind = _KINDS.get(kind, ("system", "notice"))
        attributes: dict[str, Any] = {"level": kind} if kind in NOTICE_TYPES else {}
        display = record.get("displayContent")
        if isinstance(display, str) and display.strip() and display != content.text:
            attributes["display_text"] = display  # what the user typed, when it differs
        message = Message(
            source_id=source_id,
            role=role,
            kind=message_kind,
            text=content.text,
            created_at=parse_time(record.get("timestamp")),
            parent_source_id=self.message_id(logged.parent_key),
            on_active_branch=logged.active,
            model=as_text(record.get("model")) if is_reply else None,
            usage=gemini_usage(record.get("tokens")) if is_reply else None,
            attributes=attributes,
        )
        self.messages.append(message)
        for index, call in enumerate(content.calls):
            self._api_call(where, call, message, index)
        for index, call in enumerate(record.get("toolCalls") or ()):
            self._tool_call(where, call, source_id, index, logged.active)

    def warn(self, item: Located, reason: str) -> None:
        self.issues.append(item.issue(self.file, reason, warning=True))

    def _call_source_id(self, item: Located, call_id: str | None, by_position: str) -> str:
        by_call_id = f"{self.conversation_id}:tool:{call_id}" if call_id else None
        source_id = self.ledger.source_id_for(by_call_id, by_position)
        if by_call_id is not None and source_id != by_call_id:
            self.warn(
                item, f"tool call id {call_id} was used before; this call is kept by position"
            )
        return source_id

    def _tool_call(
        self, where: Located, record: Any, message_id: str, index: int, active: bool
    ) -> None:
        """A ``toolCalls`` entry: the call with its result recorded inside the message."""
        item = Located(record, f"{where.path}.toolCalls[{index}]".lstrip("."), where.line)
        if not isinstance(record, dict):
            self.warn(item, "tool call is not an object; skipped")
            return
        call_id = as_text(record.get("id"))
        arguments = parse_arguments(record.get("args"))
        if arguments.problem:
            self.warn(item, arguments.problem)
        result = result_text(record.get("result"))
        if result is None and isinstance(record.get("resultDisplay"), str):
            result = record["resultDisplay"]
        attributes = {
            name: record[field]
            for field, name in (("displayName", "display_name"), ("description", "description"))
            if as_text(record.get(field))
        }
        call = ToolCall(
            source_id=self._call_source_id(item, call_id, f"{message_id}:tool:{index}"),
            name=as_text(record.get("name")) or "unknown",
            arguments=arguments.value,
            call_id=call_id,
            message_source_id=message_id,
            status=tool_status(record, result),
            result_text=result,
            exit_code=exit_code_of(result),
            created_at=parse_time(record.get("timestamp")),
            on_active_branch=active,
            attributes=attributes,
        )
        self.ledger.issue(call, completed=result is not None)

    def _api_call(self, where: Located, call: dict[str, Any], message: Message, index: int) -> None:
        """A ``functionCall`` part (raw API history): a call waiting for its response."""
        call_id = as_text(call.get("id"))
        arguments = parse_arguments(call.get("args"))
        if arguments.problem:
            self.warn(where, arguments.problem)
        position = f"{message.source_id}:call:{index}"
        self.ledger.issue(
            ToolCall(
                self._call_source_id(where, call_id, position),
                as_text(call.get("name")) or "unknown",
                arguments.value,
                call_id=call_id,
                message_source_id=message.source_id,
                created_at=message.created_at,
                on_active_branch=message.on_active_branch,
            )
        )

    def _complete(self, where: Located, response: dict[str, Any], message_id: str) -> None:
        call_id, name = as_text(response.get("id")), as_text(response.get("name"))
        text, failed = response_text(response)
        status: ToolStatus = "error" if failed else "ok"
        source_id = self.ledger.find(call_id) or (None if call_id else self.ledger.first_open(name))
        if source_id is not None:
            # A response repeating a result already recorded on the call is expected.
            self.ledger.complete(source_id, text, status)
            return
        label = call_id or name or "(unnamed)"
        reason = (
            f"function response for {label} has no matching call; kept as a call of unknown name"
        )
        self.issues.append(where.issue(self.file, reason, warning=True))
        orphan_id = (
            f"{self.conversation_id}:tool:{call_id}" if call_id else f"{message_id}:result:{label}"
        )
        self.ledger.orphan(orphan_id, text, name=name, status=status, call_id=call_id)


def session_key(log: SessionLog) -> str:
    """The session id, or a content hash of the first messages when the file has none."""
    session_id = as_text(log.metadata.get("sessionId"))
    if session_id is not None:
        return session_id
    opening = [
        (m.record.get("type"), split_content(m.record.get("content")).text)
        for m in list(log.messages.values())[:4]
    ]
    return content_digest(0, opening)


def build_bundle(log: SessionLog, file: str) -> ConversationBundle:
    """The bundle of one replayed session."""
    key = session_key(log)
    conversation_id = f"gemini:{key}"
    builder = _SessionBuilder(file, conversation_id)
    for message_key, logged in log.messages.items():
        builder.add(message_key, logged)
    metadata = log.metadata
    models = [m.model for m in builder.messages if m.model]
    meta_model = as_text(as_object(metadata.get("meta")).get("model"))
    directories = [d for d in metadata.get("directories") or () if isinstance(d, str)]
    subagent = metadata.get("kind") == "subagent"
    started = parse_time(metadata.get("startTime") or metadata.get("start_time"))
    ended = parse_time(metadata.get("lastUpdated"))
    conversation = Conversation(
        conversation_id=conversation_id,
        format=FORMAT,
        external_id=key,
        title=as_text(metadata.get("summary")),
        kind="subagent" if subagent else "main",
        parent_conversation_id=_parent_session(file) if subagent else None,
        project_hint=(Path(directories[0]).name or None) if directories else None,
        started_at=started,
        ended_at=ended,
        model=models[-1] if models else meta_model,
        attributes={
            k: v
            for k, v in (
                ("project_hash", as_text(metadata.get("projectHash"))),
                ("directories", directories),
            )
            if v
        },
    )
    tool_calls = builder.ledger.tool_calls()
    return ConversationBundle(
        conversation=conversation,
        messages=tuple(builder.messages),
        tool_calls=tool_calls,
        subagent_run=_subagent_run(builder.messages, tool_calls, started, ended)
        if subagent
        else None,
        issues=tuple(builder.issues),
        origin=file,
    )


def _parent_session(file: str) -> str | None:
    """Parent conversation of a sub-agent file stored as ``chats/<parentSessionId>/<id>.jsonl``.

    The parent session id is only recorded in that folder name; a file moved out of the
    ``chats`` layout gets no parent rather than a wrong one.
    """
    folder = Path(file).parent
    return f"gemini:{folder.name}" if folder.parent.name == "chats" else None


def _subagent_run(
    messages: list[Message],
    tool_calls: tuple[ToolCall, ...],
    started: datetime | None,
    ended: datetime | None,
) -> SubagentRun:
    active = [m for m in messages if m.on_active_branch]
    replies = [m for m in active if m.role == "assistant"]
    last = active[-1] if active else None
    stop = None
    if last is not None and last.attributes.get("level") == "error":
        stop = "error"
    elif last is not None and last.role == "assistant" and last.text:
        stop = "completed"
    return SubagentRun(
        status=stop,
        summary=next((m.text for m in reversed(replies) if m.text), None),
        rounds=len(replies),
        total_tokens=sum(m.usage.total_tokens for m in replies if m.usage),
        tool_uses=len(tool_calls),
        rejected_tools=tuple(c.name for c in tool_calls if c.status == "rejected"),
        stop_kind=stop,
        duration_ms=int((ended - started).total_seconds() * 1000) if started and ended else None,
    )
