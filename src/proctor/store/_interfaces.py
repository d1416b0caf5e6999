"""The store's two facade interfaces: what readers may call, and what writers add.

``StoreReader`` is the least a surface that only reads needs (the gate's history takes it);
``ReadStore`` is the whole read-only store. ``Store`` composes the protocols of every
repository (``_repository_protocols.py`` and those beside each group's records).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from proctor.findings import Finding, Severity, Status
from proctor.store._findings import NotificationRecord
from proctor.store._goal_store import GoalStoreProtocol
from proctor.store._graph_access import GraphAccessRecords
from proctor.store._graph_interfaces import GraphRecords
from proctor.store._heartbeat_records import HeartbeatRecords
from proctor.store._memory_store import MemoryCandidateRecords
from proctor.store._model_settings import ModelSettings
from proctor.store._records import (
    ConversationSummary,
    ImportedFile,
    ImportIssueRecord,
    ImportRecord,
    ProjectSummary,
    SourceVersion,
    StoreCounts,
    StoredSource,
    StoredTranscript,
)
from proctor.store._repository_protocols import (
    ConversationRecords,
    FindingRecords,
    ImportRecords,
)
from proctor.store._review_records import ReviewRecords
from proctor.store._suggestion_store import SuggestionRecords
from proctor.store._supervision_store import SupervisionRecords
from proctor.transcript import Message


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
    ConversationRecords,
    ImportRecords,
    FindingRecords,
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
    """Read and write access: the protocols of the repositories, composed (``SqlStore``).

    Every method that writes is one transaction.
    """

    def close(self) -> None:
        """Release connections."""
        ...
