"""The protocols of the repositories that had none: conversations, imports, findings,
notifications and traces (the other groups' protocols live beside their records:
``ModelSettings``, ``SupervisionRecords``, ``GoalStoreProtocol``, ``ReviewRecords``,
``GraphRecords``, ``HeartbeatRecords``, ``SuggestionRecords``, ``MemoryCandidateRecords``,
``GraphAccessRecords``). Each ``…Reader`` lists only what may be read; ``…Records`` adds the
writes. ``_store.py`` checks that every repository class satisfies its protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from proctor.findings import Finding, Severity, Status
from proctor.store._findings import NotificationRecord, RecordOutcome
from proctor.store._findings_inbox import (
    ConversationFindings,
    ConversationSort,
    FindingChange,
    FindingFilter,
    FindingGroup,
    FindingSort,
    GroupBy,
    InboxPage,
    SortOrder,
    UndoOutcome,
)
from proctor.store._import_batch import ImportBatch
from proctor.store._notifications import Notification, NotificationPage, WebhookState
from proctor.store._records import (
    ConversationSummary,
    ExcerptRequest,
    ImportedFile,
    ImportIssueRecord,
    ImportRecord,
    PlacedBundle,
    ProjectSummary,
    SourceVersion,
    StoreCounts,
    StoredSource,
    StoredTranscript,
    TranscriptExcerpt,
    WriteOutcome,
)
from proctor.store._trace_store import Citation, SubagentCard, TraceOutline
from proctor.transcript import Message, PreparedBundle, SourceIssue, ToolCall


class ConversationReader(Protocol):
    """What may be read of conversations, their sources, projects and imports."""

    def list_conversations(
        self,
        *,
        project: str | None = None,
        include_children: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[ConversationSummary]:
        """Conversations, newest first; sub-agent conversations only when asked."""
        ...

    def count_conversations(
        self, *, project: str | None = None, include_children: bool = False
    ) -> int:
        """How many conversations match."""
        ...

    def resolve_conversation_id(self, ref: str) -> str:
        """The full id for an id, external id or unique prefix."""
        ...

    def conversation(self, conversation_id: str) -> ConversationSummary:
        """One conversation's summary."""
        ...

    def transcript(self, conversation_id: str) -> StoredTranscript:
        """One conversation with everything in it."""
        ...

    def messages(self, conversation_id: str) -> list[Message]:
        """Messages of one conversation in order."""
        ...

    def source(self, source_type: str, source_id: str) -> StoredSource:
        """The current version of one source."""
        ...

    def source_versions(self, source_type: str, source_id: str) -> list[SourceVersion]:
        """Every revision of one source, oldest first."""
        ...

    def projects(self) -> list[ProjectSummary]:
        """Every project."""
        ...

    def counts(self) -> StoreCounts:
        """Row counts."""
        ...

    def imports(self, limit: int = 20) -> list[ImportRecord]:
        """Recent imports, newest first."""
        ...

    def import_issues(self, import_id: str) -> list[ImportIssueRecord]:
        """Issues of one import."""
        ...

    def imported_file(self, path: str) -> ImportedFile | None:
        """Fast-path record of a read unit."""
        ...

    def imported_files(self, paths: Sequence[str]) -> dict[str, ImportedFile]:
        """Fast-path records of those read units imported before, by path."""
        ...

    def existing_conversation_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored."""
        ...

    def transcript_excerpts(
        self, wanted: Mapping[str, ExcerptRequest]
    ) -> dict[str, TranscriptExcerpt]:
        """What appends to these conversations need of them (the stored ones only)."""
        ...


class ConversationRecords(ConversationReader, Protocol):
    """``ConversationReader`` and the writes of conversations and imported files."""

    def write_conversation(
        self, prepared: PreparedBundle, *, project: str | None = None
    ) -> WriteOutcome:
        """Write one conversation in one transaction; unchanged sources are not written."""
        ...

    def write_conversations(
        self, prepared: Sequence[PreparedBundle], *, project: str | None = None
    ) -> list[WriteOutcome]:
        """Write several conversations in one transaction: all of them, or none."""
        ...

    def append_conversations(
        self, appends: Sequence[PlacedBundle], *, project: str | None = None
    ) -> list[WriteOutcome]:
        """Write appends to several conversations in one transaction: all of them, or none."""
        ...

    def delete_conversation(self, conversation_id: str) -> list[str]:
        """Delete a conversation, its sub-agent conversations and everything derived from them, in one transaction (``_deletion.py`` says what goes and what stays)."""
        ...

    def record_imported_file(self, imported: ImportedFile) -> None:
        """Remember that a read unit was imported with this content."""
        ...

    def import_batch(self) -> AbstractContextManager[ImportBatch]:
        """One transaction for many conversations and unit records of an import, each conversation in a savepoint (``_import_batch.py``); committed when the block ends, rolled back when it raises."""
        ...


class ImportRecords(Protocol):
    """The rows of imports: begun, finished, found interrupted."""

    def begin_import(
        self, paths: Sequence[str], *, format_name: str | None, project: str | None
    ) -> str:
        """Record the start of an import by this process and return its id."""
        ...

    def finish_import(
        self, import_id: str, record: ImportRecord, issues: Sequence[SourceIssue]
    ) -> None:
        """Record the outcome and issues of an import, then release its lease."""
        ...

    def mark_interrupted_imports(self) -> list[ImportRecord]:
        """Mark ``interrupted`` every running import whose process is gone; return them."""
        ...


class FindingReader(Protocol):
    """What may be read of findings: one, a page, groups, per conversation."""

    def findings(
        self,
        *,
        conversation_ids: Sequence[str] | None = None,
        statuses: Sequence[Status] | None = None,
        min_severity: Severity | None = None,
        rule: str | None = None,
        severities: Sequence[str] | None = None,
        digested: bool | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Finding], int]:
        """A page of findings (most severe, newest first) and the total count."""
        ...

    def finding(self, finding_id: str) -> Finding:
        """One finding."""
        ...

    def resolve_finding_id(self, ref: str) -> str:
        """The finding id for an id, key or unique prefix."""
        ...

    def findings_page(
        self,
        chosen: FindingFilter,
        *,
        sort: FindingSort = "severity",
        order: SortOrder = "desc",
        limit: int = 50,
        offset: int = 0,
    ) -> InboxPage:
        """A page of the findings ``chosen`` names, with the true total."""
        ...

    def finding_position(
        self,
        chosen: FindingFilter,
        finding_id: str,
        *,
        sort: FindingSort = "severity",
        order: SortOrder = "desc",
    ) -> int | None:
        """Where a finding stands (0-based) in the list ``chosen`` names; None if left out."""
        ...

    def finding_groups(
        self, chosen: FindingFilter, *, by: GroupBy, limit: int = 50, offset: int = 0
    ) -> tuple[list[FindingGroup], int]:
        """Groups (by rule or conversation) of the findings ``chosen`` names, and how many."""
        ...

    def open_findings_by_conversation(
        self, conversation_ids: Sequence[str]
    ) -> dict[str, ConversationFindings]:
        """Open count and top open severity of each conversation."""
        ...

    def conversations_with_findings(
        self,
        *,
        project: str | None = None,
        include_children: bool = False,
        has_open: bool | None = None,
        min_severity: Severity | None = None,
        sort: ConversationSort = "started",
        order: SortOrder = "desc",
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[tuple[ConversationSummary, ConversationFindings]], int]:
        """Conversations with their open findings, filtered and sorted by them, and how many match."""
        ...


class FindingRecords(FindingReader, Protocol):
    """``FindingReader`` and the writes of findings."""

    def record_findings(self, findings: Sequence[Finding]) -> RecordOutcome:
        """Insert or update findings by key in one transaction; notify once per key."""
        ...

    def set_finding_status(self, finding_id: str, status: Status) -> Finding:
        """Move a finding along its lifecycle."""
        ...

    def set_finding_digested(self, finding_id: str, digested: bool) -> None:
        """Collapse (``True``) or expand a finding in lists."""
        ...

    def change_findings(
        self, chosen: FindingFilter, *, action: str, status: Status
    ) -> FindingChange:
        """Move the findings ``chosen`` names to ``status`` in one transaction (undoable)."""
        ...

    def undo_finding_change(self, change_id: str) -> UndoOutcome:
        """Restore every finding of a bulk change to its previous status, in one transaction; ``UndoRefusedError`` when any of them changed since."""
        ...


class NotificationReader(Protocol):
    """What may be read of notifications and their webhook outbox."""

    def notifications(self, *, unread_only: bool = True) -> list[NotificationRecord]:
        """Notifications, newest first."""
        ...

    def notification_page(
        self,
        *,
        unread_only: bool = False,
        project: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> NotificationPage:
        """Notifications newest first, ``limit`` from ``offset``, with the matching total and the unread count; ``project`` keeps one project's."""
        ...

    def unread_notification_count(self) -> int:
        """How many notifications are unread."""
        ...

    def notification(self, key: str) -> Notification:
        """One notification by its key."""
        ...

    def resolve_notification_key(self, ref: str) -> str:
        """The key of the one notification whose key or finding id starts with ``ref``."""
        ...

    def notifications_since(
        self, after: datetime | None, *, seen: Sequence[str] = (), limit: int = 50
    ) -> list[Notification]:
        """Notifications created at or after ``after`` (all when None), oldest first, leaving out the keys in ``seen`` (those already shown at that same instant)."""
        ...

    def latest_notification_time(self) -> datetime | None:
        """When the newest notification was written (None when there is none)."""
        ...

    def notifications_version(self) -> str:
        """A short string that changes whenever a notification listing would change: one written, read or deleted, or its finding's title, severity or status changed."""
        ...

    def pending_webhook_notifications(self, *, limit: int = 200) -> list[Notification]:
        """Notifications whose webhook delivery nobody has claimed yet, oldest first."""
        ...


class NotificationRecords(NotificationReader, Protocol):
    """``NotificationReader`` and the writes (read marks, webhook deliveries)."""

    def mark_notifications_read(self, keys: Sequence[str] | None) -> list[str]:
        """Mark these notifications read (every unread one when ``keys`` is None), in one transaction; returns the keys that were unread. Unknown keys are refused, naming them, and nothing is marked."""
        ...

    def claim_webhook_deliveries(
        self, *, stale_before: datetime, limit: int = 50
    ) -> list[Notification]:
        """Claim pending deliveries (and ones a dead process left ``sending`` since before ``stale_before``) for this process; each is claimed by one process only."""
        ...

    def record_webhook_outcome(
        self,
        key: str,
        state: WebhookState,
        *,
        attempts: int = 0,
        error: str | None = None,
        only_from: WebhookState | None = None,
    ) -> bool:
        """Record where a delivery ended up; with ``only_from``, only if it is still in that state (returns False when it was not)."""
        ...


class TraceReader(Protocol):
    """What the trace view reads: outline, sources, citations, sub-agent cards."""

    def trace_outline(self, conversation_id: str) -> TraceOutline:
        """The conversation's messages and tool calls without their heavy fields."""
        ...

    def trace_sources(
        self, conversation_id: str, message_ids: Sequence[str], call_ids: Sequence[str]
    ) -> tuple[dict[str, Message], dict[str, ToolCall]]:
        """Whole messages and tool calls of the conversation by source id (a window)."""
        ...

    def finding_citations(self, conversation_id: str) -> Mapping[tuple[str, str], list[Citation]]:
        """Per ``(source_type, source_id)``: the findings whose evidence cites it, most severe first. One query over the conversation's findings."""
        ...

    def subagent_cards(self, conversation_id: str) -> list[SubagentCard]:
        """The sub-agent conversations ``conversation_id`` started, oldest first, as cards. One query: the children, their run records and their counts."""
        ...
