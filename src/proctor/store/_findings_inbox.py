"""The findings inbox: findings over every conversation, filtered, grouped, sorted and paged
with their true total, and bulk status changes that can be undone exactly.

A page is found in two steps: the ids of the page are sorted on narrow columns (served by
the findings indexes), then only those rows are read whole, so paging 10,000 findings
costs a sort of ids and the 50 rows shown. A bulk change stores the status and the time of
the last status change of every finding it moved (``finding_change_items``); undoing it
puts back exactly those, and is refused when any of the findings changed status since
(or was deleted with its conversation).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Select, bindparam, case, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from proctor.errors import NotFoundError, ProctorError
from proctor.findings import SEVERITY_ORDER, TRANSITIONS, Finding, Severity, Status
from proctor.store import _schema as t
from proctor.store._findings import _finding_from_row
from proctor.store._reader import _summary as summary_from_row
from proctor.store._reader import _summary_query as summary_query
from proctor.store._records import ConversationSummary

FindingSort = Literal["severity", "created", "updated", "rule", "conversation"]
"""What a page of findings is ordered by (ties: most severe, newest, then id)."""

SortOrder = Literal["asc", "desc"]

GroupBy = Literal["rule", "conversation"]

ConversationSort = Literal["started", "open_findings", "top_severity"]
"""What the conversations list is ordered by."""

_CHUNK = 400
"""Ids per ``IN (...)``, well under every backend's parameter limit."""


class UndoRefusedError(ProctorError):
    """A bulk change cannot be undone: already undone, or its findings changed since."""


@dataclass(frozen=True, slots=True)
class FindingFilter:
    """Which findings: every field narrows (``None`` or empty means no condition)."""

    conversation_ids: Sequence[str] | None = None
    statuses: Sequence[Status] | None = None
    severities: Sequence[str] | None = None
    min_severity: Severity | None = None
    rules: Sequence[str] | None = None
    origins: Sequence[str] | None = None
    projects: Sequence[str] | None = None
    since: datetime | None = None
    """Created at or after."""
    until: datetime | None = None
    """Created before."""
    text: str | None = None
    """Words the title or the content contains (case-insensitive, as typed)."""
    digested: bool | None = None
    finding_ids: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class ConversationLabel:
    """What a list of findings shows of a finding's conversation."""

    conversation_id: str
    title: str | None
    project: str


@dataclass(frozen=True, slots=True)
class InboxPage:
    """A page of findings, the true total, and the conversations the page cites."""

    findings: list[Finding]
    total: int
    conversations: dict[str, ConversationLabel] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """Findings sharing a rule or a conversation, counted."""

    key: str
    """The rule id, or the conversation id."""
    label: str
    """The rule id, or the conversation's title (its id when it has none)."""
    count: int
    open: int
    """How many of them are open."""
    top_severity: Severity
    latest: datetime
    """When the newest of them was created."""
    project: str | None = None
    """The conversation's project (groups by conversation only)."""


@dataclass(frozen=True, slots=True)
class FindingChange:
    """What a bulk status change did; ``change_id`` undoes it (None when nothing moved)."""

    change_id: str | None
    action: str
    status: Status
    changed: int
    """Findings whose status moved."""
    unchanged: int
    """Findings already in that status, or whose status cannot move there."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    """What undoing a bulk change restored."""

    change_id: str
    restored: int


@dataclass(frozen=True, slots=True)
class ConversationFindings:
    """A conversation's open findings: how many, and the highest severity among them."""

    open: int
    top_severity: Severity | None


def severity_rank(column: Any) -> ColumnElement[int]:
    """A severity as its rank (info 0 … high 3); unknown severities rank below info."""
    return case(SEVERITY_ORDER, value=column, else_=-1)


def _severity_name(rank: int | None) -> Severity | None:
    if rank is None or rank < 0:
        return None
    for name, value in SEVERITY_ORDER.items():
        if value == rank:
            return name
    return None


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


def conditions(chosen: FindingFilter) -> list[ColumnElement[bool]]:
    """The WHERE conditions of ``chosen`` over ``findings``."""
    f = t.findings.c
    where: list[ColumnElement[bool]] = []
    if chosen.conversation_ids is not None:
        where.append(f.conversation_id.in_(list(chosen.conversation_ids)))
    if chosen.finding_ids is not None:
        where.append(f.finding_id.in_(list(chosen.finding_ids)))
    if chosen.statuses:
        where.append(f.status.in_(list(chosen.statuses)))
    if chosen.severities:
        where.append(f.severity.in_(list(chosen.severities)))
    if chosen.min_severity is not None:
        floor = SEVERITY_ORDER[chosen.min_severity]
        where.append(f.severity.in_([s for s, rank in SEVERITY_ORDER.items() if rank >= floor]))
    if chosen.rules:
        where.append(f.rule.in_(list(chosen.rules)))
    if chosen.origins:
        where.append(f.origin.in_(list(chosen.origins)))
    if chosen.projects:
        in_projects = (
            select(t.conversations.c.conversation_id)
            .join(t.projects, t.projects.c.project_id == t.conversations.c.project_id)
            .where(t.projects.c.name.in_(list(chosen.projects)))
        )
        where.append(f.conversation_id.in_(in_projects))
    if chosen.since is not None:
        where.append(f.created_at >= chosen.since)
    if chosen.until is not None:
        where.append(f.created_at < chosen.until)
    if chosen.text:
        words = chosen.text.split()
        for word in words:
            where.append(
                f.title.icontains(word, autoescape=True)
                | f.content.icontains(word, autoescape=True)
            )
    if chosen.digested is not None:
        where.append(f.digested.is_(chosen.digested))
    return where


def _order(sort: FindingSort, order: SortOrder) -> list[Any]:
    f = t.findings.c
    rank = severity_rank(f.severity)
    newest = [f.created_at.desc(), f.finding_id]
    primary: list[Any]
    if sort == "severity":
        primary = [rank]
    elif sort == "created":
        primary = [f.created_at]
    elif sort == "updated":
        primary = [f.updated_at]
    elif sort == "rule":
        primary = [f.rule]
    else:
        primary = [f.conversation_id]
    directed = [c.desc() if order == "desc" else c.asc() for c in primary]
    tail = [] if sort == "severity" else [rank.desc()]
    return [*directed, *tail, *newest]


def page_findings(
    connection: Connection,
    chosen: FindingFilter,
    *,
    sort: FindingSort = "severity",
    order: SortOrder = "desc",
    limit: int = 50,
    offset: int = 0,
) -> InboxPage:
    """A page of the findings ``chosen`` names, in ``sort`` order, with the true total."""
    where = conditions(chosen)
    f = t.findings.c
    total = connection.execute(
        select(func.count()).select_from(t.findings).where(*where)
    ).scalar_one()
    ids = list(
        connection.execute(
            select(f.finding_id)
            .where(*where)
            .order_by(*_order(sort, order))
            .limit(limit)
            .offset(offset)
        ).scalars()
    )
    if not ids:
        return InboxPage([], int(total))
    rows = {
        row.finding_id: _finding_from_row(row)
        for row in connection.execute(select(t.findings).where(f.finding_id.in_(ids)))
    }
    findings = [rows[i] for i in ids if i in rows]
    return InboxPage(findings, int(total), conversation_labels(connection, findings))


def position_of(
    connection: Connection,
    chosen: FindingFilter,
    finding_id: str,
    *,
    sort: FindingSort = "severity",
    order: SortOrder = "desc",
) -> int | None:
    """Where ``finding_id`` stands (0-based) among the findings ``chosen`` names in
    ``sort`` order; None when the filters leave it out."""
    f = t.findings.c
    numbered = (
        select(
            f.finding_id.label("finding_id"),
            func.row_number().over(order_by=_order(sort, order)).label("position"),
        )
        .where(*conditions(chosen))
        .subquery()
    )
    position = connection.execute(
        select(numbered.c.position).where(numbered.c.finding_id == finding_id)
    ).scalar_one_or_none()
    return None if position is None else int(position) - 1


def conversation_labels(
    connection: Connection, findings: Sequence[Finding]
) -> dict[str, ConversationLabel]:
    """Title and project of the conversations ``findings`` belong to."""
    return _labels(connection, sorted({finding.conversation_id for finding in findings}))


def _labels(connection: Connection, wanted: Sequence[str]) -> dict[str, ConversationLabel]:
    if not wanted:
        return {}
    c = t.conversations.c
    query = (
        select(c.conversation_id, c.title, t.projects.c.name)
        .join(t.projects, t.projects.c.project_id == c.project_id)
        .where(c.conversation_id.in_(list(wanted)))
    )
    return {
        row.conversation_id: ConversationLabel(row.conversation_id, row.title, row.name)
        for row in connection.execute(query)
    }


def group_findings(
    connection: Connection,
    chosen: FindingFilter,
    *,
    by: GroupBy,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[FindingGroup], int]:
    """Groups of the findings ``chosen`` names (most severe, then largest first), and how
    many groups there are."""
    f = t.findings.c
    key = f.rule if by == "rule" else f.conversation_id
    rank = func.max(severity_rank(f.severity)).label("top_rank")
    count = func.count().label("count")
    open_count = func.sum(case((f.status == "open", 1), else_=0)).label("open")
    latest = func.max(f.created_at).label("latest")
    grouped: Select[Any] = (
        select(key.label("key"), count, open_count, rank, latest)
        .where(*conditions(chosen))
        .group_by(key)
    )
    total = connection.execute(select(func.count()).select_from(grouped.subquery())).scalar_one()
    rows = connection.execute(
        grouped.order_by(rank.desc(), count.desc(), key).limit(limit).offset(offset)
    ).all()
    labels: dict[str, ConversationLabel] = {}
    if by == "conversation":
        labels = _labels(connection, [row.key for row in rows])
    groups = []
    for row in rows:
        label = labels.get(row.key)
        groups.append(
            FindingGroup(
                key=row.key,
                label=(label.title or row.key) if label else row.key,
                count=int(row._mapping["count"]),
                open=int(row.open or 0),
                top_severity=_severity_name(row.top_rank) or "info",
                latest=row.latest,
                project=label.project if label else None,
            )
        )
    return groups, int(total)


def change_findings(
    connection: Connection,
    chosen: FindingFilter,
    *,
    action: str,
    status: Status,
    now: datetime,
) -> FindingChange:
    """Move every finding ``chosen`` names to ``status`` where its lifecycle allows, in
    the caller's transaction, remembering each one's previous status for ``undo_change``."""
    f = t.findings.c
    rows = connection.execute(
        select(f.finding_id, f.status, f.status_changed_at).where(*conditions(chosen))
    ).all()
    movable = [r for r in rows if r.status != status and status in TRANSITIONS[r.status]]
    if not movable:
        return FindingChange(None, action, status, 0, len(rows), now)
    change_id = uuid.uuid4().hex
    connection.execute(
        insert(t.finding_changes).values(
            change_id=change_id,
            action=action,
            status=status,
            finding_count=len(movable),
            created_at=now,
        )
    )
    connection.execute(
        insert(t.finding_change_items),
        [
            {
                "change_id": change_id,
                "finding_id": r.finding_id,
                "previous_status": r.status,
                "previous_changed_at": r.status_changed_at,
            }
            for r in movable
        ],
    )
    for chunk in _chunks([r.finding_id for r in movable]):
        connection.execute(
            update(t.findings)
            .where(f.finding_id.in_(chunk))
            .values(status=status, status_changed_at=now)
        )
    return FindingChange(change_id, action, status, len(movable), len(rows) - len(movable), now)


def undo_change(connection: Connection, change_id: str, now: datetime) -> UndoOutcome:
    """Give every finding of a bulk change back its previous status (and the time of its
    previous status change), in the caller's transaction; refused when already undone or
    when any of them changed status since."""
    change = connection.execute(
        select(t.finding_changes).where(t.finding_changes.c.change_id == change_id)
    ).first()
    if change is None:
        raise NotFoundError(f"no bulk change {change_id!r}; it may belong to another store")
    if change.undone_at is not None:
        raise UndoRefusedError(
            f"bulk change {change_id} was already undone at {change.undone_at.isoformat()}"
        )
    i = t.finding_change_items.c
    f = t.findings.c
    items = connection.execute(
        select(
            i.finding_id, i.previous_status, i.previous_changed_at, f.status, f.status_changed_at
        )
        .join(t.findings, f.finding_id == i.finding_id)
        .where(i.change_id == change_id)
    ).all()
    gone = change.finding_count - len(items)
    if gone:
        raise UndoRefusedError(
            f"cannot undo: {gone} of the {change.finding_count} findings this change moved "
            "were deleted since (with their conversation); nothing was changed"
        )
    moved = [
        r for r in items if r.status != change.status or r.status_changed_at != change.created_at
    ]
    if moved:
        first = moved[0]
        raise UndoRefusedError(
            f"cannot undo: {len(moved)} of the {change.finding_count} findings changed status "
            f"since (finding {first.finding_id} is now {first.status!r}); nothing was changed"
        )
    if items:
        connection.execute(
            update(t.findings)
            .where(f.finding_id == bindparam("target"))
            .values(status=bindparam("previous"), status_changed_at=bindparam("previous_at")),
            [
                {
                    "target": r.finding_id,
                    "previous": r.previous_status,
                    "previous_at": r.previous_changed_at,
                }
                for r in items
            ],
        )
    connection.execute(
        update(t.finding_changes)
        .where(t.finding_changes.c.change_id == change_id)
        .values(undone_at=now)
    )
    return UndoOutcome(change_id, len(items))


def open_findings_by_conversation(
    connection: Connection, conversation_ids: Sequence[str]
) -> dict[str, ConversationFindings]:
    """Open count and top open severity of each conversation, in one grouped query."""
    if not conversation_ids:
        return {}
    query = open_findings_query().where(t.findings.c.conversation_id.in_(list(conversation_ids)))
    return {
        row.conversation_id: ConversationFindings(int(row.open), _severity_name(row.top_rank))
        for row in connection.execute(query)
    }


def open_findings_query() -> Select[Any]:
    """``conversation_id, open, top_rank`` of open findings, grouped by conversation."""
    f = t.findings.c
    return (
        select(
            f.conversation_id.label("conversation_id"),
            func.count().label("open"),
            func.max(severity_rank(f.severity)).label("top_rank"),
        )
        .where(f.status == "open")
        .group_by(f.conversation_id)
    )


def list_conversations_with_findings(
    connection: Connection,
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
    """Conversations with their open-finding count and top open severity (one grouped
    query joined in), filtered and sorted by them, and how many match."""
    c = t.conversations.c
    counts = open_findings_query().subquery("open_findings")
    open_count = func.coalesce(counts.c.open, 0)
    top_rank = func.coalesce(counts.c.top_rank, -1)
    query = (
        summary_query()
        .add_columns(open_count.label("open_findings"), top_rank.label("top_open_rank"))
        .outerjoin(counts, counts.c.conversation_id == c.conversation_id)
    )
    where: list[ColumnElement[bool]] = []
    if project is not None:
        where.append(t.projects.c.name == project)
    if not include_children:
        where.append(c.parent_conversation_id.is_(None))
    if has_open is True:
        where.append(open_count > 0)
    elif has_open is False:
        where.append(open_count == 0)
    if min_severity is not None:
        where.append(top_rank >= SEVERITY_ORDER[min_severity])
    query = query.where(*where)
    total = connection.execute(
        select(func.count())
        .select_from(t.conversations)
        .join(t.projects, t.projects.c.project_id == c.project_id)
        .outerjoin(counts, counts.c.conversation_id == c.conversation_id)
        .where(*where)
    ).scalar_one()
    started = c.started_at.desc().nulls_last() if order == "desc" else c.started_at.asc()
    keys: list[Any]
    if sort == "open_findings":
        keys = [open_count.desc() if order == "desc" else open_count.asc(), top_rank.desc()]
    elif sort == "top_severity":
        keys = [top_rank.desc() if order == "desc" else top_rank.asc(), open_count.desc()]
    else:
        keys = []
    rows = connection.execute(
        query.order_by(*keys, started, c.conversation_id).limit(limit).offset(offset)
    )
    return [
        (
            summary_from_row(row),
            ConversationFindings(int(row.open_findings), _severity_name(row.top_open_rank)),
        )
        for row in rows
    ], int(total)
