"""The findings repository: one finding, pages and groups over every conversation, bulk
status changes with an exact undo, and the conversations list with open-finding counts."""

from __future__ import annotations

from collections.abc import Sequence

from proctor._util.clock import utcnow
from proctor.findings import Finding, Severity, Status
from proctor.store import _findings as findings_store
from proctor.store import _findings_inbox as inbox
from proctor.store._base import Repository
from proctor.store._findings import RecordOutcome
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
from proctor.store._records import ConversationSummary


class FindingReads(Repository):
    """Findings over every conversation: filter, group, sort, page."""

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
        """A page of findings (most severe, newest first) and the total count.

        ``severities`` keeps exactly those severities; ``digested`` only collapsed (True)
        or only expanded (False) findings.
        """
        with self._read() as c:
            return findings_store.list_findings(
                c,
                conversation_ids=conversation_ids,
                statuses=statuses,
                min_severity=min_severity,
                rule=rule,
                severities=severities,
                digested=digested,
                limit=limit,
                offset=offset,
            )

    def finding(self, finding_id: str) -> Finding:
        """One finding."""
        with self._read() as c:
            return findings_store.get_finding(c, finding_id)

    def resolve_finding_id(self, ref: str) -> str:
        """The finding id for an id, key or unique prefix."""
        with self._read() as c:
            return findings_store.resolve_finding_id(c, ref)

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
        with self._read() as c:
            return inbox.page_findings(
                c, chosen, sort=sort, order=order, limit=limit, offset=offset
            )

    def finding_position(
        self,
        chosen: FindingFilter,
        finding_id: str,
        *,
        sort: FindingSort = "severity",
        order: SortOrder = "desc",
    ) -> int | None:
        """Where a finding stands (0-based) in the list ``chosen`` names; None if left out."""
        with self._read() as c:
            return inbox.position_of(c, chosen, finding_id, sort=sort, order=order)

    def finding_groups(
        self, chosen: FindingFilter, *, by: GroupBy, limit: int = 50, offset: int = 0
    ) -> tuple[list[FindingGroup], int]:
        """Groups (by rule or conversation) of the findings ``chosen`` names, and how many."""
        with self._read() as c:
            return inbox.group_findings(c, chosen, by=by, limit=limit, offset=offset)

    def open_findings_by_conversation(
        self, conversation_ids: Sequence[str]
    ) -> dict[str, ConversationFindings]:
        """Open count and top open severity of each conversation."""
        with self._read() as c:
            return inbox.open_findings_by_conversation(c, conversation_ids)

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
        """Conversations with their open findings, filtered and sorted by them, and how
        many match."""
        with self._read() as c:
            return inbox.list_conversations_with_findings(
                c,
                project=project,
                include_children=include_children,
                has_open=has_open,
                min_severity=min_severity,
                sort=sort,
                order=order,
                limit=limit,
                offset=offset,
            )


class FindingRepository(FindingReads):
    """``FindingReads`` and the writes (recording findings, changes in bulk, undo), each one transaction."""

    def record_findings(self, findings: Sequence[Finding]) -> RecordOutcome:
        """Insert or update findings by key in one transaction; notify once per key."""
        with self._write() as c:
            return findings_store.record_findings(c, findings, utcnow())

    def set_finding_status(self, finding_id: str, status: Status) -> Finding:
        """Move a finding along its lifecycle."""
        with self._write() as c:
            return findings_store.set_status(c, finding_id, status, utcnow())

    def set_finding_digested(self, finding_id: str, digested: bool) -> None:
        """Collapse (``True``) or expand a finding in lists."""
        with self._write() as c:
            findings_store.set_digested(c, finding_id, digested)

    def change_findings(
        self, chosen: FindingFilter, *, action: str, status: Status
    ) -> FindingChange:
        """Move the findings ``chosen`` names to ``status`` in one transaction (undoable)."""
        with self._write() as c:
            return inbox.change_findings(c, chosen, action=action, status=status, now=utcnow())

    def undo_finding_change(self, change_id: str) -> UndoOutcome:
        """Restore every finding of a bulk change to its previous status, in one
        transaction; ``UndoRefusedError`` when any of them changed since."""
        with self._write() as c:
            return inbox.undo_change(c, change_id, utcnow())
