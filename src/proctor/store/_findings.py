"""Findings in the store: upsert by key, user status and digest, notifications once per key.

Re-running rules over the same events produces findings with the same keys; recording
them updates what the rule measured and never touches what the user decided (status,
digested). A notification row is written the first time a notifying finding's key is
seen, and never again for that key (SPEC SUP-8).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import case, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from proctor.errors import NotFoundError
from proctor.findings import SEVERITY_ORDER, Evidence, Finding, Severity, Status, check_transition
from proctor.store import _schema as t


@dataclass(frozen=True, slots=True)
class RecordOutcome:
    """What recording a batch of findings changed."""

    new: tuple[str, ...] = ()
    """Keys of findings seen for the first time."""
    updated: tuple[str, ...] = ()
    """Keys whose measured content changed."""
    unchanged: int = 0
    notified: tuple[str, ...] = ()
    """Keys that produced a notification now."""


@dataclass(frozen=True, slots=True)
class NotificationRecord:
    """A notification: one per finding key, ever."""

    key: str
    finding_id: str
    created_at: datetime
    read_at: datetime | None


def _measured(finding: Finding) -> dict[str, Any]:
    return {
        "origin": finding.origin,
        "rule": finding.rule,
        "rule_version": finding.rule_version,
        "action": finding.action,
        "category": finding.category,
        "severity": finding.severity,
        "title": finding.title,
        "content": finding.content,
        "evidence": [e.model_dump(exclude_none=True) for e in finding.evidence],
        "confidence": finding.confidence,
        "actual": finding.actual,
        "threshold": finding.threshold,
        "trigger_source_id": finding.trigger_source_id,
        "speculative": finding.speculative,
    }


def _hash(values: dict[str, Any]) -> str:
    data = orjson.dumps(values, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def record_findings(
    connection: Connection, findings: Sequence[Finding], now: datetime
) -> RecordOutcome:
    """Insert new findings, update changed ones, notify once per key."""
    if not findings:
        return RecordOutcome()
    keys = [f.key for f in findings]
    existing = {
        row.key: (row.finding_id, row.content_hash)
        for row in connection.execute(
            select(t.findings.c.key, t.findings.c.finding_id, t.findings.c.content_hash).where(
                t.findings.c.key.in_(keys)
            )
        )
    }
    notified_before = set(
        connection.execute(
            select(t.notifications.c.key).where(t.notifications.c.key.in_(keys))
        ).scalars()
    )
    new: list[str] = []
    updated: list[str] = []
    notified: list[str] = []
    unchanged = 0
    for finding in findings:
        measured = _measured(finding)
        digest = _hash(measured)
        known = existing.get(finding.key)
        if known is None:
            finding_id = uuid.uuid4().hex
            connection.execute(
                insert(t.findings).values(
                    finding_id=finding_id,
                    key=finding.key,
                    conversation_id=finding.conversation_id,
                    status="open",
                    digested=False,
                    content_hash=digest,
                    created_at=now,
                    updated_at=now,
                    **measured,
                )
            )
            existing[finding.key] = (finding_id, digest)
            new.append(finding.key)
        else:
            finding_id, old_digest = known
            if old_digest == digest:
                unchanged += 1
            else:
                connection.execute(
                    update(t.findings)
                    .where(t.findings.c.finding_id == finding_id)
                    .values(content_hash=digest, updated_at=now, **measured)
                )
                updated.append(finding.key)
        if finding.notifies and finding.key not in notified_before:
            connection.execute(
                insert(t.notifications).values(
                    key=finding.key, finding_id=finding_id, created_at=now
                )
            )
            notified_before.add(finding.key)
            notified.append(finding.key)
    return RecordOutcome(tuple(new), tuple(updated), unchanged, tuple(notified))


def _finding_from_row(row: Any) -> Finding:
    m = row._mapping
    return Finding(
        finding_id=m["finding_id"],
        key=m["key"],
        conversation_id=m["conversation_id"],
        origin=m["origin"],
        rule=m["rule"],
        rule_version=m["rule_version"],
        action=m["action"],
        category=m["category"],
        severity=m["severity"],
        title=m["title"],
        content=m["content"],
        evidence=[Evidence.model_validate(e) for e in m["evidence"]],
        confidence=m["confidence"],
        actual=m["actual"],
        threshold=m["threshold"],
        trigger_source_id=m["trigger_source_id"],
        speculative=bool(m["speculative"]),
        status=m["status"],
        digested=bool(m["digested"]),
        created_at=m["created_at"],
        updated_at=m["updated_at"],
    )


def list_findings(
    connection: Connection,
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
    """A page of findings (most severe, then newest first) and the total count."""
    f = t.findings.c
    conditions: list[ColumnElement[bool]] = []
    if conversation_ids is not None:
        conditions.append(f.conversation_id.in_(list(conversation_ids)))
    if statuses is not None:
        conditions.append(f.status.in_(list(statuses)))
    if min_severity is not None:
        allowed = [s for s, rank in SEVERITY_ORDER.items() if rank >= SEVERITY_ORDER[min_severity]]
        conditions.append(f.severity.in_(allowed))
    if rule is not None:
        conditions.append(f.rule == rule)
    if severities is not None:
        conditions.append(f.severity.in_(list(severities)))
    if digested is not None:
        conditions.append(f.digested.is_(digested))
    rank = case(SEVERITY_ORDER, value=f.severity, else_=0)
    query = select(t.findings).where(*conditions)
    total = connection.execute(select(func.count()).select_from(query.subquery())).scalar_one()
    rows = connection.execute(
        query.order_by(rank.desc(), f.updated_at.desc(), f.finding_id).limit(limit).offset(offset)
    )
    return [_finding_from_row(row) for row in rows], int(total)


def resolve_finding_id(connection: Connection, ref: str) -> str:
    """A finding id from a full id, a key, or a unique prefix of either."""
    f = t.findings.c
    matches = list(
        connection.execute(
            select(f.finding_id)
            .where(
                f.finding_id.startswith(ref, autoescape=True)
                | f.key.startswith(ref, autoescape=True)
            )
            .limit(3)
        ).scalars()
    )
    if len(matches) == 1:
        return str(matches[0])
    if not matches:
        raise NotFoundError(f"no finding matches {ref!r}; `proctor findings list` shows the ids")
    raise NotFoundError(f"{ref!r} matches several findings; give more of the id")


def get_finding(connection: Connection, finding_id: str) -> Finding:
    """One finding."""
    row = connection.execute(
        select(t.findings).where(t.findings.c.finding_id == finding_id)
    ).first()
    if row is None:
        raise NotFoundError(f"no finding {finding_id!r}")
    return _finding_from_row(row)


def set_status(connection: Connection, finding_id: str, status: Status, now: datetime) -> Finding:
    """Move a finding along its lifecycle (checked against the allowed transitions)."""
    current = get_finding(connection, finding_id)
    check_transition(current.status, status)
    connection.execute(
        update(t.findings)
        .where(t.findings.c.finding_id == finding_id)
        .values(status=status, status_changed_at=now)
    )
    return current.model_copy(update={"status": status})


def set_digested(connection: Connection, finding_id: str, digested: bool) -> None:
    """Collapse (or expand again) a finding in lists."""
    get_finding(connection, finding_id)
    connection.execute(
        update(t.findings).where(t.findings.c.finding_id == finding_id).values(digested=digested)
    )


def list_notifications(
    connection: Connection, *, unread_only: bool = True
) -> list[NotificationRecord]:
    """Notifications, newest first."""
    query = select(t.notifications).order_by(t.notifications.c.created_at.desc())
    if unread_only:
        query = query.where(t.notifications.c.read_at.is_(None))
    return [
        NotificationRecord(r.key, r.finding_id, r.created_at, r.read_at)
        for r in connection.execute(query)
    ]
