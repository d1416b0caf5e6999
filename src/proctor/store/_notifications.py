"""Notifications as the person reads them, and as the webhook delivers them (SPEC SUP-8).

A notification is written once per finding key when a notifying finding is first seen
(``_findings.py``). This part of the store reads them joined to their finding (title,
severity, rule, origin, status) and its conversation (title, project), pages them with
totals, counts the unread, marks them read — some or all, in one transaction, keeping
the first time each was read — and gives a version string that changes whenever anything
a listing shows changes (for ETags and live updates).

Webhook delivery is an outbox on the same rows: a new notification is ``pending``; a
process claims it (``sending``, atomically: one claimer wins on either backend), then
records ``delivered``, ``failed`` with the reason, or ``skipped``. A claim left by a
process that died is taken over once it is older than ``stale_before``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement

from proctor._util.clock import utcnow
from proctor.errors import NotFoundError
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._findings import NotificationRecord, list_notifications

WebhookState = Literal["pending", "sending", "delivered", "failed", "skipped"]
"""Where a notification's webhook delivery stands (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class Notification:
    """One notification with what a reader needs of its finding and conversation."""

    key: str
    """The notification's id: its finding's key (24 hex digits)."""
    finding_id: str
    created_at: datetime
    read_at: datetime | None
    title: str
    severity: str
    rule: str
    origin: str
    action: str
    category: str
    status: str
    """The finding's status now (open, acknowledged, resolved …)."""
    conversation_id: str
    conversation_title: str | None
    project: str
    cwd: str | None
    """The conversation's working folder (where its policy is looked up)."""
    webhook_state: str | None
    webhook_attempts: int
    webhook_error: str | None

    @property
    def unread(self) -> bool:
        """True until the notification is marked read."""
        return self.read_at is None


@dataclass(frozen=True, slots=True)
class NotificationPage:
    """A page of notifications, newest first, with the counts a badge needs."""

    items: tuple[Notification, ...]
    total: int
    """How many notifications match the filter (all pages)."""
    unread: int
    """How many notifications are unread (whatever the filter)."""


_n = t.notifications.c
_f = t.findings.c
_c = t.conversations.c
_p = t.projects.c


def _joined() -> Select[tuple[object, ...]]:
    return (
        select(
            _n.key,
            _n.finding_id,
            _n.created_at,
            _n.read_at,
            _n.webhook_state,
            _n.webhook_attempts,
            _n.webhook_error,
            _f.title,
            _f.severity,
            _f.rule,
            _f.origin,
            _f.action,
            _f.category,
            _f.status,
            _f.conversation_id,
            _c.title.label("conversation_title"),
            _c.cwd,
            _p.name.label("project"),
        )
        .select_from(t.notifications)
        .join(t.findings, _f.finding_id == _n.finding_id)
        .join(t.conversations, _c.conversation_id == _f.conversation_id)
        .join(t.projects, _p.project_id == _c.project_id)
    )


def _notification(row: RowMapping) -> Notification:
    return Notification(
        key=row["key"],
        finding_id=row["finding_id"],
        created_at=row["created_at"],
        read_at=row["read_at"],
        title=row["title"],
        severity=row["severity"],
        rule=row["rule"],
        origin=row["origin"],
        action=row["action"],
        category=row["category"],
        status=row["status"],
        conversation_id=row["conversation_id"],
        conversation_title=row["conversation_title"],
        project=row["project"],
        cwd=row["cwd"],
        webhook_state=row["webhook_state"],
        webhook_attempts=int(row["webhook_attempts"] or 0),
        webhook_error=row["webhook_error"],
    )


def _newest_first(query: Select[tuple[object, ...]]) -> Select[tuple[object, ...]]:
    return query.order_by(_n.created_at.desc(), _n.key)


def _unread(connection: Connection) -> int:
    count = select(func.count()).select_from(t.notifications).where(_n.read_at.is_(None))
    return int(connection.execute(count).scalar_one())


def _keys_where(connection: Connection, condition: ColumnElement[bool]) -> list[str]:
    return [str(k) for k in connection.execute(select(_n.key).where(condition)).scalars()]


class NotificationReads(Repository):
    """Reading and counting notifications; their webhook outbox."""

    def notifications(self, *, unread_only: bool = True) -> list[NotificationRecord]:
        """Notifications, newest first."""
        with self._read() as c:
            return list_notifications(c, unread_only=unread_only)

    def notification_page(
        self,
        *,
        unread_only: bool = False,
        project: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> NotificationPage:
        """Notifications newest first, ``limit`` from ``offset``, with the matching total and
        the unread count; ``project`` keeps one project's."""
        query = _joined()
        if unread_only:
            query = query.where(_n.read_at.is_(None))
        if project is not None:
            query = query.where(_p.name == project)
        with self._read() as c:
            total = c.execute(select(func.count()).select_from(query.subquery())).scalar_one()
            rows = c.execute(_newest_first(query).limit(limit).offset(offset)).mappings()
            items = tuple(_notification(row) for row in rows)
            return NotificationPage(items, int(total), _unread(c))

    def unread_notification_count(self) -> int:
        """How many notifications are unread."""
        with self._read() as c:
            return _unread(c)

    def notification(self, key: str) -> Notification:
        """One notification by its key."""
        with self._read() as c:
            row = c.execute(_joined().where(_n.key == key)).mappings().first()
        if row is None:
            raise NotFoundError(f"no notification {key!r}")
        return _notification(row)

    def resolve_notification_key(self, ref: str) -> str:
        """The key of the one notification whose key or finding id starts with ``ref``."""
        if not ref.strip():
            raise NotFoundError("an empty id names no notification")
        condition = _n.key.startswith(ref, autoescape=True) | _n.finding_id.startswith(
            ref, autoescape=True
        )
        with self._read() as c:
            matches = list(c.execute(select(_n.key).where(condition).limit(2)).scalars())
        if len(matches) == 1:
            return str(matches[0])
        if not matches:
            raise NotFoundError(
                f"no notification matches {ref!r}; `proctor notifications` shows the ids"
            )
        raise NotFoundError(f"{ref!r} matches several notifications; give more of the id")

    def notifications_since(
        self, after: datetime | None, *, seen: Sequence[str] = (), limit: int = 50
    ) -> list[Notification]:
        """Notifications created at or after ``after`` (all when None), oldest first,
        leaving out the keys in ``seen`` (those already shown at that same instant)."""
        query = _joined()
        if after is not None:
            query = query.where(_n.created_at >= after)
        if seen:
            query = query.where(_n.key.not_in(list(seen)))
        with self._read() as c:
            rows = c.execute(query.order_by(_n.created_at, _n.key).limit(limit)).mappings()
            return [_notification(row) for row in rows]

    def latest_notification_time(self) -> datetime | None:
        """When the newest notification was written (None when there is none)."""
        with self._read() as c:
            value: datetime | None = c.execute(select(func.max(_n.created_at))).scalar_one()
            return value

    def notifications_version(self) -> str:
        """A short string that changes whenever a notification listing would change: one
        written, read or deleted, or its finding's title, severity or status changed."""
        state = select(
            func.count(),
            func.count(_n.read_at),
            func.max(_n.created_at),
            func.max(_n.read_at),
            func.max(_f.updated_at),
            func.max(_f.status_changed_at),
        ).select_from(t.notifications.join(t.findings, _f.finding_id == _n.finding_id))
        with self._read() as c:
            row = c.execute(state).one()
        text = "|".join("" if value is None else str(value) for value in row)
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def pending_webhook_notifications(self, *, limit: int = 200) -> list[Notification]:
        """Notifications whose webhook delivery nobody has claimed yet, oldest first."""
        query = _joined().where(_n.webhook_state == "pending")
        with self._read() as c:
            rows = c.execute(query.order_by(_n.created_at, _n.key).limit(limit)).mappings()
            return [_notification(row) for row in rows]


class NotificationRepository(NotificationReads):
    """``NotificationReads`` and the writes (marking read, claiming and recording webhook deliveries), each one transaction."""

    def mark_notifications_read(self, keys: Sequence[str] | None) -> list[str]:
        """Mark these notifications read (every unread one when ``keys`` is None), in one
        transaction; returns the keys that were unread. Unknown keys are refused, naming
        them, and nothing is marked."""
        now = utcnow()
        with self._write() as c:
            if keys is None:
                chosen = _keys_where(c, _n.read_at.is_(None))
            else:
                wanted = list(dict.fromkeys(keys))
                known = set(_keys_where(c, _n.key.in_(wanted))) if wanted else set()
                unknown = [k for k in wanted if k not in known]
                if unknown:
                    raise NotFoundError(
                        f"no notification {unknown[0]!r}; `proctor notifications` shows the ids"
                    )
                chosen = (
                    _keys_where(c, and_(_n.key.in_(wanted), _n.read_at.is_(None))) if wanted else []
                )
            if chosen:
                c.execute(update(t.notifications).where(_n.key.in_(chosen)).values(read_at=now))
            return sorted(chosen)

    def claim_webhook_deliveries(
        self, *, stale_before: datetime, limit: int = 50
    ) -> list[Notification]:
        """Claim pending deliveries (and ones a dead process left ``sending`` since before
        ``stale_before``) for this process; each is claimed by one process only."""
        claimable = or_(
            _n.webhook_state == "pending",
            and_(_n.webhook_state == "sending", _n.webhook_at < stale_before),
        )
        now = utcnow()
        claimed: list[str] = []
        with self._write() as c:
            candidates = c.execute(
                select(_n.key).where(claimable).order_by(_n.created_at, _n.key).limit(limit)
            ).scalars()
            for key in list(candidates):
                taken = c.execute(
                    update(t.notifications)
                    .where(_n.key == key, claimable)
                    .values(webhook_state="sending", webhook_at=now)
                )
                if taken.rowcount == 1:
                    claimed.append(str(key))
        if not claimed:
            return []
        with self._read() as c:
            rows = c.execute(
                _joined().where(_n.key.in_(claimed)).order_by(_n.created_at, _n.key)
            ).mappings()
            return [_notification(row) for row in rows]

    def record_webhook_outcome(
        self,
        key: str,
        state: WebhookState,
        *,
        attempts: int = 0,
        error: str | None = None,
        only_from: WebhookState | None = None,
    ) -> bool:
        """Record where a delivery ended up; with ``only_from``, only if it is still in that
        state (returns False when it was not)."""
        condition: list[ColumnElement[bool]] = [_n.key == key]
        if only_from is not None:
            condition.append(_n.webhook_state == only_from)
        with self._write() as c:
            changed = c.execute(
                update(t.notifications)
                .where(*condition)
                .values(
                    webhook_state=state,
                    webhook_attempts=attempts,
                    webhook_error=error,
                    webhook_at=utcnow(),
                )
            )
            return bool(changed.rowcount == 1)
