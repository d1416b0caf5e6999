"""Findings: list (by conversation, status, severity, rule, digested), show, status actions
and digested (collapse / expand in lists)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import DigestedChange, FindingAction, FindingPage, StatusChange
from proctor.findings import Finding, Severity, Status

router = APIRouter(prefix="/findings", tags=["findings"])

ACTION_STATUS: dict[FindingAction, Status] = {
    "ack": "acknowledged",
    "resolve": "resolved",
    "dismiss": "dismissed",
    "false_positive": "false_positive",
    "reopen": "open",
}
"""The status each action moves a finding to."""


@router.get("")
def list_findings(
    store: StoreDep,
    conversation: Annotated[
        str | None, Query(description="Only this conversation (id or prefix).")
    ] = None,
    status: Annotated[list[Status] | None, Query(description="Only these statuses.")] = None,
    min_severity: Annotated[Severity | None, Query(description="At least this severity.")] = None,
    severity: Annotated[
        list[Severity] | None, Query(description="Only these severities (exactly).")
    ] = None,
    rule: Annotated[str | None, Query(description="Only this rule.")] = None,
    digested: Annotated[
        bool | None, Query(description="Only digested (true) or only undigested (false) ones.")
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> FindingPage:
    """A page of findings, most severe first."""
    conversation_ids = None
    if conversation is not None:
        conversation_ids = [store.resolve_conversation_id(conversation)]
    page, total = store.findings(
        conversation_ids=conversation_ids,
        statuses=status,
        min_severity=min_severity,
        rule=rule,
        severities=severity,
        digested=digested,
        limit=limit,
        offset=offset,
    )
    return FindingPage(limit=limit, offset=offset, total=total, findings=page)


@router.get("/{finding_ref}")
def show_finding(store: StoreDep, finding_ref: str) -> Finding:
    """One finding by id, key or unique prefix."""
    return store.finding(store.resolve_finding_id(finding_ref))


@router.post("/{finding_ref}/status")
def change_status(store: StoreDep, finding_ref: str, change: StatusChange) -> Finding:
    """Acknowledge, resolve, dismiss, mark false positive or reopen a finding."""
    finding_id = store.resolve_finding_id(finding_ref)
    return store.set_finding_status(finding_id, ACTION_STATUS[change.action])


@router.post("/{finding_ref}/digested")
def set_digested(store: StoreDep, finding_ref: str, change: DigestedChange) -> Finding:
    """Mark a finding digested (collapsed in lists) or clear the mark."""
    finding_id = store.resolve_finding_id(finding_ref)
    store.set_finding_digested(finding_id, change.digested)
    return store.finding(finding_id)
