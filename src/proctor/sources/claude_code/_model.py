"""The compact form of a Claude Code file: thread nodes, their content entries, file facts.

``_records`` fills these in one pass over the file; the later stages (threading,
building, sub-agent linking) only read them. Entries hold what a reader may see and the
few facts later stages need, never the raw record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from proctor.sources.claude_code._events import EventInfo
from proctor.transcript import SourceIssue

EntryKind = Literal["user", "assistant", "system", "attachment", "tool_use", "tool_result"]


@dataclass(slots=True)
class ToolUse:
    """A ``tool_use`` block (or a drifted top-level ``tool_use`` record)."""

    call_id: str | None
    name: str
    arguments: Any
    block_index: int


@dataclass(slots=True)
class ToolOutcome:
    """A ``tool_result`` block: the visible text the agent received for one call."""

    call_id: str | None
    text: str
    is_error: bool
    tool_name: str | None = None
    """Set by drifted top-level ``tool_result`` records that name the tool instead of an id."""


@dataclass(slots=True, eq=False)
class Entry:
    """The parts of a content record that later stages use."""

    kind: EntryKind
    texts: list[str] = field(default_factory=list)
    tool_uses: list[ToolUse] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    message_id: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    request_id: str | None = None
    is_meta: bool = False
    is_compact_summary: bool = False
    is_api_error: bool = False
    origin_kind: str | None = None
    result_meta: dict[str, Any] | None = None
    """Small ``toolUseResult`` fields of a tool-result line (see ``_RESULT_META_KEYS``)."""
    result_task_id: str | None = None
    """``toolUseResult.task.id`` of a ``TaskCreate`` result."""
    source_tool_line: str | None = None
    """``sourceToolAssistantUUID``: the assistant line whose call this line answers."""
    event: EventInfo | None = None


@dataclass(slots=True, eq=False)
class Node:
    """One record in the ``uuid``/``parentUuid`` thread, with its entry when it has content."""

    key: str | None
    parent: str | None
    line: int
    raw_time: Any
    sidechain: bool
    agent_id: str | None
    entry: Entry | None = None
    follows_previous: bool = False
    """The record has no ``parentUuid`` field at all (old or drifted logs): chain it to the
    record before it in the file."""
    time: datetime | None = None


@dataclass(slots=True, eq=False)
class ParsedFile:
    """Everything read from one file, in file order."""

    path: Path
    nodes: list[Node] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    """Distinct ``sessionId`` values in order of first appearance."""
    custom_title: str | None = None
    ai_title: str | None = None
    summaries: list[tuple[str, str | None]] = field(default_factory=list)
    """``summary`` records as ``(text, leafUuid)``."""
    cwd: str | None = None
    version: str | None = None
    git_branch: str | None = None
    entrypoint: str | None = None
    permission_mode: str | None = None
    agent_links: dict[str, str] = field(default_factory=dict)
    """``parentToolUseID`` → ``agentId`` from ``agent_progress`` records (linking only)."""
    issues: list[SourceIssue] = field(default_factory=list)
    """Line problems, yielded by the adapter as they are."""
    unreadable_times: int = 0
    first_unreadable_time: tuple[int, str] | None = None

    @property
    def first_agent_id(self) -> str | None:
        """The first ``agentId`` carried by a sidechain record."""
        for node in self.nodes:
            if node.sidechain and node.agent_id:
                return node.agent_id
        return None
