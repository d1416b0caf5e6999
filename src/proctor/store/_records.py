"""Values the store returns: summaries, write outcomes, import records, source versions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from proctor.transcript import (
    Conversation,
    Message,
    PreparedBundle,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
)


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    """A project and how much it holds."""

    project_id: str
    name: str
    status: str
    conversations: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One row of ``proctor conversations list``."""

    conversation: Conversation
    project: str
    messages: int
    tool_calls: int
    subagents: int
    redactions: int
    origin: str | None
    imported_at: datetime
    updated_at: datetime

    @property
    def conversation_id(self) -> str:
        """Shortcut for ``conversation.conversation_id``."""
        return self.conversation.conversation_id


@dataclass(frozen=True, slots=True)
class StoredTranscript:
    """A conversation with everything in it, in order, as stored."""

    summary: ConversationSummary
    messages: tuple[Message, ...]
    tool_calls: tuple[ToolCall, ...]
    tasks: tuple[Task, ...]
    task_events: tuple[TaskEvent, ...]
    subagent_run: SubagentRun | None
    children: tuple[ConversationSummary, ...]


@dataclass(frozen=True, slots=True)
class SourceVersion:
    """One revision of a source."""

    source_type: str
    source_id: str
    revision: int
    fingerprint: str
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class StoredSource:
    """Identity and current version of a stored source."""

    source_type: str
    source_id: str
    conversation_id: str
    fingerprint: str
    revision: int
    redactions: int
    occurred_at: datetime | None


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What writing one conversation changed."""

    conversation_id: str
    created: bool = False
    header_changed: bool = False
    added: int = 0
    revised: int = 0
    unchanged: int = 0
    updated: int = 0
    """Sources whose metadata changed without a new revision."""
    shared: tuple[str, ...] = ()
    """Source ids skipped because another conversation already owns them."""
    redactions: int = 0

    @property
    def changed(self) -> bool:
        """True when anything was written."""
        return (
            self.created or self.header_changed or bool(self.added or self.revised or self.updated)
        )


@dataclass(frozen=True, slots=True)
class ImportIssueRecord:
    """A problem recorded during an import."""

    path: str
    line: int | None
    severity: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One run of ``proctor ingest`` (or one watch cycle)."""

    import_id: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    paths: tuple[str, ...]
    files: int
    conversations: int
    conversations_written: int
    sources_added: int
    sources_revised: int
    sources_unchanged: int
    redactions: int
    issues: int
    format: str | None = None
    project: str | None = None


@dataclass(frozen=True, slots=True)
class ImportedFile:
    """Fast-path record: a read unit already imported with this content."""

    path: str
    content_hash: str
    size: int
    adapter: str
    adapter_version: int
    conversation_ids: tuple[str, ...]


@dataclass(slots=True)
class StoreCounts:
    """Row counts, for summaries and tests."""

    projects: int = 0
    conversations: int = 0
    messages: int = 0
    tool_calls: int = 0
    tasks: int = 0
    task_events: int = 0
    subagent_runs: int = 0
    sources: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


SourceKey = tuple[str, str]
"""``(source_type, source_id)``: how a message, tool call or task event is named."""


@dataclass(frozen=True, slots=True)
class ExcerptRequest:
    """What an append to a stored conversation needs to read of it (SPEC ING-7)."""

    message_ids: frozenset[str] = frozenset()
    """Messages the append sends: the stored ones among them are revised in place."""
    call_ids: frozenset[str] = frozenset()
    """Tool calls the append sends or completes (a late ``tool_result``)."""
    event_ids: frozenset[str] = frozenset()
    """Task events the append sends."""
    latest_assistant: bool = False
    """Also the stored assistant message an appended call without one would belong to."""
    first_prompt: bool = False
    """Also the first stored prompt, when the append clears the conversation's title."""


@dataclass(frozen=True, slots=True)
class TranscriptExcerpt:
    """The part of a stored conversation an append reads, each item with its stored place.

    The conversation row, every task and the sub-agent record are whole; messages, tool
    calls and task events are only those asked for plus the last stored message, in
    stored order.
    """

    conversation: Conversation
    redactions: int
    """Secrets replaced in the conversation so far."""
    messages: tuple[Message, ...]
    tool_calls: tuple[ToolCall, ...]
    tasks: tuple[Task, ...]
    task_events: tuple[TaskEvent, ...]
    subagent_run: SubagentRun | None
    places: Mapping[SourceKey, int]
    """The stored ``seq`` of every message, tool call and task event above."""
    next_places: Mapping[str, int]
    """Per source type: the ``seq`` after the last stored one (where appends go)."""


@dataclass(frozen=True, slots=True)
class PlacedBundle:
    """A prepared bundle for an append: each of its sources with its place (``seq``)."""

    prepared: PreparedBundle
    places: Mapping[SourceKey, int]
