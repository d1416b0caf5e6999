"""Findings: the inbox over every conversation (filter, group, sort, page with the true
total), bulk triage with one undo, show, status actions and digested (collapse / expand)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query

from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.api._inbox_models import (
    BULK_STATUS,
    BulkChangeOutcome,
    BulkChangeRequest,
    ConversationLabelOut,
    DigestedChange,
    FindingAction,
    FindingFilterBody,
    FindingGroupOut,
    FindingGroupPage,
    FindingsPage,
    StatusChange,
    UndoOutcomeOut,
)
from proctor.findings import Finding, Severity, Status
from proctor.store import (
    FindingFilter,
    FindingSort,
    ReadStore,
    SortOrder,
    SqlStore,
    UndoRefusedError,
)

router = APIRouter(prefix="/findings", tags=["findings"])

ACTION_STATUS: dict[FindingAction, Status] = {
    "ack": "acknowledged",
    "resolve": "resolved",
    "dismiss": "dismissed",
    "false_positive": "false_positive",
    "reopen": "open",
}
"""The status each action moves a finding to."""


def _conversation_ids(store: ReadStore, conversation: str | None) -> list[str] | None:
    return None if conversation is None else [store.resolve_conversation_id(conversation)]


def finding_filter(
    store: ReaderDep,
    conversation: Annotated[
        str | None, Query(description="Only this conversation (id or prefix).")
    ] = None,
    status: Annotated[list[Status] | None, Query(description="Only these statuses.")] = None,
    min_severity: Annotated[Severity | None, Query(description="At least this severity.")] = None,
    severity: Annotated[
        list[Severity] | None, Query(description="Only these severities (exactly).")
    ] = None,
    rule: Annotated[list[str] | None, Query(description="Only these rules.")] = None,
    origin: Annotated[
        list[Literal["rule", "model"]] | None,
        Query(description="Only from rules, or only from the model supervisor."),
    ] = None,
    project: Annotated[
        list[str] | None, Query(description="Only these projects (by name).")
    ] = None,
    since: Annotated[datetime | None, Query(description="Created at or after (ISO 8601).")] = None,
    until: Annotated[datetime | None, Query(description="Created before (ISO 8601).")] = None,
    q: Annotated[
        str | None,
        Query(max_length=200, description="Words the title or the content contains."),
    ] = None,
    digested: Annotated[
        bool | None, Query(description="Only digested (true) or only undigested (false) ones.")
    ] = None,
) -> FindingFilter:
    """The filters every findings list and group query takes."""
    return FindingFilter(
        conversation_ids=_conversation_ids(store, conversation),
        statuses=status,
        severities=severity,
        min_severity=min_severity,
        rules=rule,
        origins=origin,
        projects=project,
        since=since,
        until=until,
        text=q,
        digested=digested,
    )


FilterDep = Annotated[FindingFilter, Depends(finding_filter)]


@router.get("")
def list_findings(
    store: ReaderDep,
    chosen: FilterDep,
    sort: Annotated[
        FindingSort, Query(description="severity, created, updated, rule or conversation.")
    ] = "severity",
    order: Annotated[SortOrder, Query(description="asc or desc.")] = "desc",
    around: Annotated[
        str | None,
        Query(description="Return the page holding this finding (id, key or prefix) instead."),
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> FindingsPage:
    """A page of findings over every conversation (most severe, then newest first by
    default) with the true total, and the title and project of the conversations it cites.
    With ``around``, the page holding that finding (``offset`` says where it starts)."""
    if around is not None:
        finding_id = store.resolve_finding_id(around)
        position = store.finding_position(chosen, finding_id, sort=sort, order=order)
        if position is not None:
            offset = position - position % limit
    page = store.findings_page(chosen, sort=sort, order=order, limit=limit, offset=offset)
    return FindingsPage(
        limit=limit,
        offset=offset,
        total=page.total,
        findings=page.findings,
        conversations={
            key: ConversationLabelOut(
                conversation_id=label.conversation_id, title=label.title, project=label.project
            )
            for key, label in page.conversations.items()
        },
    )


@router.get("/groups")
def finding_groups(
    store: ReaderDep,
    chosen: FilterDep,
    by: Annotated[
        Literal["rule", "conversation"], Query(description="Group by rule or by conversation.")
    ] = "rule",
    limit: Limit = 50,
    offset: Offset = 0,
) -> FindingGroupPage:
    """The findings the filters match, grouped by rule or conversation with counts (most
    severe, then largest group first); list a group's findings with ``rule=`` or
    ``conversation=`` and the same filters."""
    groups, total = store.finding_groups(chosen, by=by, limit=limit, offset=offset)
    return FindingGroupPage(
        limit=limit,
        offset=offset,
        by=by,
        total=total,
        groups=[
            FindingGroupOut(
                key=g.key,
                label=g.label,
                count=g.count,
                open=g.open,
                top_severity=g.top_severity,
                latest=g.latest,
                project=g.project,
            )
            for g in groups
        ],
    )


def _body_filter(store: SqlStore, body: FindingFilterBody) -> FindingFilter:
    return FindingFilter(
        conversation_ids=_conversation_ids(store, body.conversation),
        statuses=body.status,
        severities=body.severity,
        min_severity=body.min_severity,
        rules=body.rule,
        origins=body.origin,
        projects=body.project,
        since=body.since,
        until=body.until,
        text=body.q,
    )


@router.post("/bulk")
def bulk_change(store: StoreDep, request: BulkChangeRequest) -> BulkChangeOutcome:
    """Acknowledge, resolve, dismiss or mark false positive many findings in one
    transaction: the listed ids, or every finding the filter matches. Findings already in
    that status, or whose lifecycle does not allow it, stay as they are (``unchanged``)."""
    if request.filter is not None:
        chosen = _body_filter(store, request.filter)
    else:
        chosen = FindingFilter(finding_ids=list(dict.fromkeys(request.ids or [])))
    status = BULK_STATUS[request.action]
    change = store.change_findings(chosen, action=request.action, status=status)
    return BulkChangeOutcome(
        change_id=change.change_id,
        action=request.action,
        status=status,
        changed=change.changed,
        unchanged=change.unchanged,
    )


@router.post("/bulk/{change_id}/undo")
def undo_bulk_change(store: StoreDep, change_id: str) -> UndoOutcomeOut:
    """Give every finding of a bulk change its previous status back, in one transaction.
    Refused (409, nothing changed) when already undone or when any of its findings changed
    status since."""
    try:
        outcome = store.undo_finding_change(change_id)
    except UndoRefusedError as refused:
        raise HTTPException(status_code=409, detail=str(refused)) from refused
    return UndoOutcomeOut(change_id=outcome.change_id, restored=outcome.restored)


@router.get("/{finding_ref}")
def show_finding(store: ReaderDep, finding_ref: str) -> Finding:
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
