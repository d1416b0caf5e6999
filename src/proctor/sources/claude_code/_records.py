"""One pass over a Claude Code file: records become thread nodes and compact entries.

This module owns the per-line work, which is the hot path of an import (a real session
is mostly ``progress`` lines). Each line costs a few dict lookups: progress and other
chain-only lines keep just their ``uuid``/``parentUuid`` link, and content lines keep
only what later stages need (visible text, tool uses, tool results, usage), never the
raw record, so large ``toolUseResult`` payloads, snapshots and base64 images are
released as soon as the line is read.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from proctor.sources._files import RecordLines, read_jsonl_objects
from proctor.sources.claude_code._content import (
    assistant_parts,
    content_problem,
    json_type,
    result_text,
    user_parts,
)
from proctor.sources.claude_code._events import attachment_event, system_event
from proctor.sources.claude_code._model import Entry, Node, ParsedFile, ToolOutcome, ToolUse
from proctor.sources.claude_code._values import as_str, parse_time
from proctor.transcript import SourceIssue, nesting_problem

_BOOKKEEPING_TYPES = frozenset(
    {
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "mode",
        "agent-name",
        "worktree-state",
        "pr-link",
        "frame-link",
        "relocated",
        "bridge-session",
        "atis-latch",
        "started",
        "result",
    }
)
"""UI and state records that carry nothing a supervisor reads; skipped silently."""

_RESULT_META_KEYS = (
    "durationMs",
    "interrupted",
    "isImage",
    "noOutputExpected",
    "backgroundTaskId",
    "numFiles",
    "numLines",
    "truncated",
    "code",
    "codeText",
    "bytes",
    "filePath",
    "type",
    "status",
    "agentId",
    "agentType",
    "isAsync",
    "totalDurationMs",
    "totalTokens",
    "totalToolUseCount",
    "worktreeBranch",
    "success",
)
"""Small scalar ``toolUseResult`` fields worth keeping; file contents and patches are not."""

_META_KEY_SET = frozenset(_RESULT_META_KEYS)
_META_KEY_ORDER = {key: index for index, key in enumerate(_RESULT_META_KEYS)}

_MAX_META_STRING = 300

_new_node = object.__new__
"""Makes a ``Node`` whose fields the reader then sets (cheaper than its ``__init__``)."""


def read_jsonl(path: Path) -> ParsedFile:
    """Read a session or sub-agent JSONL file."""
    parsed = ParsedFile(path)
    read_jsonl_objects(path, _Collector(parsed, str(path)).add, parsed.issues)
    return parsed


def read_records(path: Path, records: Iterable[Any]) -> ParsedFile:
    """Read records held in a JSON document (the web ``{"loglines": [...]}`` export)."""
    parsed = ParsedFile(path)
    shown = str(path)
    collector = _Collector(parsed, shown)
    lines = RecordLines(path, "loglines")
    for index, record in enumerate(records):
        line = lines.of(index) or index + 1  # the line it starts on (else its position)
        if not isinstance(record, dict):
            reason = f"loglines[{index}] is not a JSON object; skipped"
            parsed.issues.append(SourceIssue(shown, reason, line))
            continue
        too_deep = nesting_problem(record)
        if too_deep is not None:
            parsed.issues.append(
                SourceIssue(shown, f"loglines[{index}]: {too_deep}; skipped", line)
            )
            continue
        collector.add(record, line)
    return parsed


class _Collector:
    """Turns records into nodes; kept as a class so the per-line path stays flat and fast."""

    def __init__(self, parsed: ParsedFile, shown: str) -> None:
        self.parsed = parsed
        self.shown = shown
        """The file, as issues name it."""
        self.seen_sessions: set[str] = set()
        self.append_node = parsed.nodes.append

    def add(self, record: dict[str, Any], line: int) -> None:
        kind = record.get("type")
        if kind == "progress":  # most lines; only a string equals it
            self._chain(record, line)
            data = record.get("data")
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                agent_id = data.get("agentId")
                tool_id = record.get("parentToolUseID")
                if isinstance(agent_id, str) and isinstance(tool_id, str):
                    self.parsed.agent_links.setdefault(tool_id, agent_id)
            return
        shown = self.shown
        if not isinstance(kind, str) and kind is not None:
            reason = f'field "type" is {json_type(kind)}, not a record type; line skipped'
            self.parsed.issues.append(SourceIssue(shown, reason, line))
            return
        if kind in _BOOKKEEPING_TYPES:
            return
        if kind == "user":
            self._content(record, line, shown, self._user(record, line, shown))
        elif kind == "assistant":
            self._content(record, line, shown, self._assistant(record, line, shown))
        elif kind == "system":
            self._content(record, line, shown, Entry("system", event=system_event(record)))
        elif kind == "attachment":
            self._content(record, line, shown, Entry("attachment", event=attachment_event(record)))
        elif kind == "tool_use" or kind == "tool_result":
            self._content(record, line, shown, _drifted_tool_record(record, kind))
        elif kind == "summary":
            text = record.get("summary")
            if isinstance(text, str) and text.strip():
                self.parsed.summaries.append((text, as_str(record.get("leafUuid"))))
        elif kind == "custom-title":
            self.parsed.custom_title = as_str(record.get("customTitle")) or self.parsed.custom_title
        elif kind == "ai-title":
            self.parsed.ai_title = as_str(record.get("aiTitle")) or self.parsed.ai_title
        elif kind == "permission-mode":
            self.parsed.permission_mode = (
                as_str(record.get("permissionMode")) or self.parsed.permission_mode
            )
        elif kind is None:
            self.parsed.issues.append(
                SourceIssue(shown, 'record has no "type" field; skipped', line, severity="warning")
            )
        elif "uuid" in record:
            # A record type from a newer Claude Code: skipped quietly, but it stays in the
            # thread so parent links that pass through it still connect. One that carries
            # a message is worth a word: its text is not imported.
            self._chain(record, line)
            if isinstance(record.get("message"), dict):
                self._warn(
                    shown,
                    f"record type {kind[:60]!r} is not known to this Proctor; its message "
                    "was not imported",
                    line,
                )

    def _warn(self, shown: str, reason: str, line: int) -> None:
        self.parsed.issues.append(SourceIssue(shown, reason, line, severity="warning"))

    def _chain(self, record: dict[str, Any], line: int) -> Node:
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        agent_id = record.get("agentId")
        # Made without ``Node.__init__`` (a Python frame per record): every field is set
        # here.
        node = _new_node(Node)
        # A string as it is, None as it is (most ``agentId``s), anything else by the rule.
        node.key = uuid if (type(uuid) is str and uuid) or uuid is None else _text_or_none(uuid)
        node.line = line
        node.raw_time = record.get("timestamp")
        node.sidechain = record.get("isSidechain") is True
        node.agent_id = (
            agent_id
            if (type(agent_id) is str and agent_id) or agent_id is None
            else _text_or_none(agent_id)
        )
        node.entry = None
        node.time = None
        node.follows_previous = False
        if (type(parent) is str and parent) or (
            parent is not None and (parent := _text_or_none(parent)) is not None
        ):
            node.parent = parent
        else:
            node.parent = None
            logical = record.get("logicalParentUuid")
            if isinstance(logical, str) and logical:
                node.parent = logical
            elif "parentUuid" not in record:
                node.follows_previous = True
        self.append_node(node)
        return node

    def _content(self, record: dict[str, Any], line: int, shown: str, entry: Entry | None) -> None:
        node = self._chain(record, line)
        node.entry = entry
        node.time = parse_time(node.raw_time)
        if node.time is None and node.raw_time is not None:
            parsed = self.parsed
            parsed.unreadable_times += 1
            if parsed.first_unreadable_time is None:
                parsed.first_unreadable_time = (line, str(node.raw_time)[:60])
        session = record.get("sessionId") or record.get("session_id")  # stream-json: snake case
        if not ((type(session) is str and session) or session is None):
            session = _text_or_none(session)
        if session is not None and session not in self.seen_sessions:
            self.seen_sessions.add(session)
            self.parsed.session_ids.append(session)
        parsed = self.parsed
        if parsed.cwd is None:
            cwd = record.get("cwd")
            if isinstance(cwd, str) and cwd:
                parsed.cwd = cwd
        value = record.get("version")
        if isinstance(value, str) and value:
            parsed.version = value
        value = record.get("gitBranch")
        if isinstance(value, str) and value:
            parsed.git_branch = value
        value = record.get("entrypoint")
        if isinstance(value, str) and value:
            parsed.entrypoint = value
        value = record.get("permissionMode")
        if isinstance(value, str) and value:
            parsed.permission_mode = value

    def _user(self, record: dict[str, Any], line: int, shown: str) -> Entry | None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.parsed.issues.append(
                SourceIssue(
                    shown, "user record has no message object; its content was skipped", line
                )
            )
            return None
        content = message.get("content")
        if content is None:
            self.parsed.issues.append(
                SourceIssue(
                    shown, "user record has no message.content; its content was skipped", line
                )
            )
            return None
        texts, result_blocks, plain = user_parts(content)
        problem = None if plain else content_problem(content, assistant=False)
        if problem is not None:
            self._warn(shown, f"{problem}; that part was skipped", line)
        entry = Entry(
            "user",
            texts=texts,
            is_meta=record.get("isMeta") is True,
            is_compact_summary=record.get("isCompactSummary") is True,
        )
        origin = record.get("origin")
        if isinstance(origin, dict):
            entry.origin_kind = as_str(origin.get("kind"))
        if result_blocks:
            fallback_id = as_str(record.get("sourceToolUseID"))
            entry.outcomes = [
                ToolOutcome(
                    as_str(block.get("tool_use_id")) or fallback_id,
                    result_text(block.get("content", block.get("text"))),
                    block.get("is_error") is True,
                )
                for block in result_blocks
            ]
            entry.source_tool_line = as_str(record.get("sourceToolAssistantUUID"))
            _read_tool_use_result(entry, record.get("toolUseResult"))
            if record.get("toolDenialKind") == "user-rejected" and entry.result_meta is not None:
                entry.result_meta["rejected"] = True
        return entry

    def _assistant(self, record: dict[str, Any], line: int, shown: str) -> Entry | None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.parsed.issues.append(
                SourceIssue(
                    shown, "assistant record has no message object; its content was skipped", line
                )
            )
            return None
        if "content" not in message:
            self._warn(shown, "assistant record has no message.content; nothing to read", line)
        content = message.get("content")
        texts, blocks, plain = assistant_parts(content)
        problem = None if plain else content_problem(content, assistant=True)
        if problem is not None:
            self._warn(shown, f"{problem}; that part was skipped", line)
        usage = message.get("usage")
        return Entry(
            "assistant",
            texts=texts,
            tool_uses=[
                ToolUse(as_str(block.get("id")), _tool_name(block), block.get("input"), index)
                for index, block in blocks
            ],
            message_id=as_str(message.get("id")),
            model=as_str(message.get("model")),
            usage=usage if isinstance(usage, dict) else None,
            stop_reason=as_str(message.get("stop_reason")),
            request_id=as_str(record.get("requestId")),
            is_api_error=record.get("isApiErrorMessage") is True,
        )


def _text_or_none(value: Any) -> str | None:
    """``value`` when it is a non-empty string (a subclass included), else None: the
    rare case of ``_chain``'s exact-type test."""
    return value if isinstance(value, str) and value else None


def _tool_name(block: dict[str, Any]) -> str:
    return as_str(block.get("name")) or "unknown"


def _drifted_tool_record(record: dict[str, Any], kind: str) -> Entry:
    """Old or drifted logs write a call and its output as their own top-level records."""
    if kind == "tool_use":
        call = ToolUse(None, _tool_name(record), record.get("input"), 0)
        return Entry("tool_use", tool_uses=[call])
    output = record.get("output", record.get("content"))
    outcome = ToolOutcome(
        as_str(record.get("tool_use_id")),
        result_text(output),
        record.get("is_error") is True,
        tool_name=as_str(record.get("name")),
    )
    return Entry("tool_result", outcomes=[outcome])


def _read_tool_use_result(entry: Entry, value: Any) -> None:
    """Keep the small, useful part of ``toolUseResult``; drop file contents and patches."""
    if isinstance(value, str):
        if value.startswith("User rejected"):
            entry.result_meta = {"rejected": True}
        return
    if not isinstance(value, dict):
        return
    meta: dict[str, Any] = {}
    # The kept keys it holds, in ``_RESULT_META_KEYS`` order: a set intersection in C
    # instead of a lookup of every kept key (a result holds a handful of them).
    for key in sorted(_META_KEY_SET.intersection(value), key=_META_KEY_ORDER.__getitem__):
        item = value[key]
        if item is None:
            continue
        if isinstance(item, bool | int | float) or (
            isinstance(item, str) and len(item) <= _MAX_META_STRING
        ):
            meta[key] = item
    for stream in ("stdout", "stderr"):
        text = value.get(stream)
        if isinstance(text, str):
            meta[f"{stream}Chars"] = len(text)
    task = value.get("task")
    if isinstance(task, dict):
        entry.result_task_id = as_str(task.get("id"))
    entry.result_meta = meta
