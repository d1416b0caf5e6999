"""The store's two interfaces: what readers may call, and what writers add.

``StoreReader`` is what surfaces that only read (listing, showing, later the API and the
MCP server) receive; ``Store`` adds the write paths (import, delete, findings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from proctor.findings import Finding, Severity, Status
from proctor.store._findings import NotificationRecord, RecordOutcome
from proctor.store._goal_store import GoalStoreProtocol
from proctor.store._graph_access import GraphAccessRecords
from proctor.store._graph_interfaces import GraphRecords
from proctor.store._heartbeat_records import HeartbeatRecords
from proctor.store._import_batch import ImportBatch
from proctor.store._memory_store import MemoryCandidateRecords
from proctor.store._model_settings import ModelSettings
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
from proctor.store._review_records import ReviewRecords
from proctor.store._suggestion_store import SuggestionRecords
from proctor.store._supervision_store import SupervisionRecords
from proctor.transcript import Message, PreparedBundle, SourceIssue


class StoreReader(Protocol):
    """Read-only access: everything a surface that only shows data may call."""

    def list_conversations(
        self,
        *,
        project: str | None = None,
        include_children: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[ConversationSummary]:
        """Conversations, newest first."""
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
        """Every revision of one source."""
        ...

    def projects(self) -> list[ProjectSummary]:
        """Every project."""
        ...

    def counts(self) -> StoreCounts:
        """Row counts."""
        ...

    def imports(self, limit: int = 20) -> list[ImportRecord]:
        """Recent imports."""
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
        """A page of findings and the total count."""
        ...

    def finding(self, finding_id: str) -> Finding:
        """One finding."""
        ...

    def resolve_finding_id(self, ref: str) -> str:
        """The finding id for an id, key or unique prefix."""
        ...

    def notifications(self, *, unread_only: bool = True) -> list[NotificationRecord]:
        """Notifications, newest first."""
        ...


class Store(
    StoreReader,
    ModelSettings,
    SupervisionRecords,
    GoalStoreProtocol,
    ReviewRecords,
    GraphRecords,
    HeartbeatRecords,
    SuggestionRecords,
    MemoryCandidateRecords,
    GraphAccessRecords,
    Protocol,
):
    """Read and write access, model settings, supervision records and goals.

    Every method that writes is one transaction.
    """

    def write_conversation(
        self, prepared: PreparedBundle, *, project: str | None = None
    ) -> WriteOutcome:
        """Write one conversation; unchanged sources are not written."""
        ...

    def write_conversations(
        self, prepared: Sequence[PreparedBundle], *, project: str | None = None
    ) -> list[WriteOutcome]:
        """Write several conversations in one transaction: all of them, or none."""
        ...

    def transcript_excerpts(
        self, wanted: Mapping[str, ExcerptRequest]
    ) -> dict[str, TranscriptExcerpt]:
        """What appends to these conversations need of them (the stored ones only)."""
        ...

    def append_conversations(
        self, appends: Sequence[PlacedBundle], *, project: str | None = None
    ) -> list[WriteOutcome]:
        """Write appends (each only its own sources, at its places) in one transaction."""
        ...

    def delete_conversation(self, conversation_id: str) -> list[str]:
        """Delete a conversation, its sub-agent conversations and all their sources."""
        ...

    def begin_import(
        self, paths: Sequence[str], *, format_name: str | None, project: str | None
    ) -> str:
        """Record the start of an import by this process and return its id."""
        ...

    def mark_interrupted_imports(self) -> list[ImportRecord]:
        """Mark ``interrupted`` every running import whose process is gone; return them."""
        ...

    def finish_import(
        self, import_id: str, record: ImportRecord, issues: Sequence[SourceIssue]
    ) -> None:
        """Record the outcome of an import."""
        ...

    def record_imported_file(self, imported: ImportedFile) -> None:
        """Remember that a read unit was imported with this content."""
        ...

    def import_batch(self) -> AbstractContextManager[ImportBatch]:
        """One transaction for many conversations and unit records of an import, each
        conversation in a savepoint; committed when the block ends."""
        ...

    def record_findings(self, findings: Sequence[Finding]) -> RecordOutcome:
        """Insert or update findings by key; notify once per key."""
        ...

    def set_finding_status(self, finding_id: str, status: Status) -> Finding:
        """Move a finding along its lifecycle."""
        ...

    def set_finding_digested(self, finding_id: str, digested: bool) -> None:
        """Collapse or expand a finding."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
