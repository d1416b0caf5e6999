"""The findings inbox's wire documents: pages with the conversations they cite, groups,
bulk changes and their undo, and the conversations list with open findings."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from proctor.api._base_models import WireModel
from proctor.api._overview_models import Page
from proctor.findings import Finding, Severity, Status
from proctor.store import ConversationSummary

BulkAction = Literal["ack", "resolve", "dismiss", "false_positive"]
"""What a bulk change does to every finding it names."""

BULK_STATUS: dict[BulkAction, Status] = {
    "ack": "acknowledged",
    "resolve": "resolved",
    "dismiss": "dismissed",
    "false_positive": "false_positive",
}
"""The status each bulk action moves findings to."""

MAX_BULK_IDS = 10_000
"""The most finding ids one bulk request may name (a filter names any number)."""

FindingAction = Literal["ack", "resolve", "dismiss", "false_positive", "reopen"]
"""What a person does to a finding."""


class StatusChange(BaseModel):
    """Move a finding along its lifecycle."""

    model_config = ConfigDict(extra="forbid")

    action: FindingAction
    """``ack``, ``resolve``, ``dismiss``, ``false_positive`` or ``reopen``."""


class DigestedChange(BaseModel):
    """Collapse a finding in lists (digested) or expand it again."""

    model_config = ConfigDict(extra="forbid")

    digested: bool
    """True: digested (collapsed); false: clear the mark."""


class ConversationLabelOut(WireModel):
    """What a findings list shows of a finding's conversation."""

    conversation_id: str
    title: str | None
    project: str


class FindingsPage(Page):
    """A page of findings with the true total, and the conversations the page cites."""

    total: int
    """How many findings match (no cap)."""
    findings: list[Finding]
    """The page."""
    conversations: dict[str, ConversationLabelOut] = Field(default_factory=dict)
    """Title and project of each conversation a finding of the page belongs to, by id."""


class FindingGroupOut(WireModel):
    """Findings sharing a rule or a conversation."""

    key: str
    """The rule id, or the conversation id (filter with ``rule=`` or ``conversation=``)."""
    label: str
    """The rule id, or the conversation's title (its id when it has none)."""
    count: int
    """How many findings of the group match the filters."""
    open: int
    """How many of them are open."""
    top_severity: Severity
    latest: datetime
    """When the newest of them was created."""
    project: str | None = None
    """The conversation's project (groups by conversation)."""


class FindingGroupPage(Page):
    """A page of groups, most severe then largest first."""

    by: Literal["rule", "conversation"]
    total: int
    """How many groups there are."""
    groups: list[FindingGroupOut]


class FindingFilterBody(BaseModel):
    """The inbox's filters, as a bulk change names them (each narrows; empty: no condition)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    conversation: str | None = None
    """One conversation (id, external id or unique prefix)."""
    status: list[Status] = []
    severity: list[Severity] = []
    min_severity: Severity | None = None
    rule: list[str] = []
    origin: list[Literal["rule", "model"]] = []
    project: list[str] = []
    since: datetime | None = None
    """Created at or after."""
    until: datetime | None = None
    """Created before."""
    q: str | None = Field(default=None, max_length=200)
    """Words the title or content contains."""


class BulkChangeRequest(BaseModel):
    """Change the status of many findings at once: the listed ``ids``, or every finding
    the ``filter`` matches. One transaction; the answer's ``change_id`` undoes it."""

    model_config = ConfigDict(extra="forbid")

    action: BulkAction
    """``ack``, ``resolve``, ``dismiss`` or ``false_positive``."""
    ids: list[str] | None = Field(default=None, min_length=1, max_length=MAX_BULK_IDS)
    """Finding ids (full ids, as the list returns them)."""
    filter: FindingFilterBody | None = None
    """Or: every finding these filters match."""

    @model_validator(mode="after")
    def _one_selection(self) -> BulkChangeRequest:
        if (self.ids is None) == (self.filter is None):
            raise ValueError("give either ids (a list of finding ids) or filter, not both")
        return self


class BulkChangeOutcome(WireModel):
    """What a bulk change did."""

    change_id: str | None
    """Undo with ``POST /api/findings/bulk/{change_id}/undo``; null when nothing moved."""
    action: BulkAction
    status: Status
    changed: int
    """Findings whose status moved."""
    unchanged: int
    """Findings already in that status, or whose status cannot move there."""


class UndoOutcomeOut(WireModel):
    """What an undo restored."""

    change_id: str
    restored: int
    """Findings given back their previous status."""


@dataclasses.dataclass(frozen=True, slots=True)
class ConversationRow(ConversationSummary):
    """A conversation of the list, with its open findings."""

    open_findings: int = 0
    """How many of its findings are open."""
    top_severity: Severity | None = None
    """The highest severity among its open findings (null when none is open)."""

    @classmethod
    def of(
        cls, summary: ConversationSummary, open_findings: int, top_severity: str | None
    ) -> ConversationRow:
        """``summary`` with its open findings."""
        values = {f.name: getattr(summary, f.name) for f in dataclasses.fields(summary)}
        return cls(**values, open_findings=open_findings, top_severity=top_severity)  # type: ignore[arg-type]


class ConversationFindingsPage(Page):
    """A page of conversations with their open findings."""

    total: int
    """How many conversations match."""
    conversations: list[ConversationRow]
