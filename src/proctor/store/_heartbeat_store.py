"""Heartbeat plans, their leases, heartbeat runs and the activity list (SPEC HB-2, HB-3, HB-7).

A due plan is claimed in one transaction: the plan's lease is taken (owner, attempt,
expiry) with a guarded update that only succeeds when the lease is still what was read,
its next run is advanced and the heartbeat run row is created. Two workers racing for one
plan cannot both win. A worker that dies leaves its lease to expire; the plan is then
claimed again with the attempt counted up, and the dead attempt's row reads
``abandoned``.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    and_,
    cast,
    delete,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.engine import Connection

from proctor._util.clock import utcnow
from proctor.errors import BusyError, ConfigError, NotFoundError
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._heartbeat_records import (
    ACTIVITY_MAX_LIMIT,
    ACTIVITY_MAX_OFFSET,
    ActivityEntry,
    Claim,
    HeartbeatPlan,
    HeartbeatRun,
    NextRun,
    PlanValues,
)

_plans = t.heartbeat_plans
_runs = t.heartbeat_runs


class HeartbeatReads(Repository):
    """Plans, heartbeat runs and activity: the reads."""

    def plan(self, plan_ref: str) -> HeartbeatPlan:
        """One plan by name, id or unique id prefix."""
        with self._read() as c:
            return _load_plan(c, _resolve_plan(c, plan_ref))

    def plans(self) -> list[HeartbeatPlan]:
        """Every plan, by name."""
        with self._read() as c:
            rows = c.execute(_plan_query().order_by(_plans.c.name)).mappings()
            return [_plan(row) for row in rows]

    def heartbeat_run(self, heartbeat_id: str) -> HeartbeatRun:
        """One heartbeat run by id or unique prefix."""
        with self._read() as c:
            full = _resolve_heartbeat(c, heartbeat_id)
            return _heartbeat(c.execute(select(_runs).where(_runs.c.heartbeat_id == full)).one())

    def heartbeat_runs(self, *, plan: str | None = None, limit: int = 50) -> list[HeartbeatRun]:
        """Heartbeat runs, newest first, optionally of one plan (name or id)."""
        query = select(_runs).order_by(_runs.c.started_at.desc(), _runs.c.attempt.desc())
        with self._read() as c:
            if plan is not None:
                query = query.where(_runs.c.plan_id == _resolve_plan(c, plan))
            return [_heartbeat(row) for row in c.execute(query.limit(limit))]

    def activity(
        self, plan: str | None = None, limit: int = 20, offset: int = 0
    ) -> list[ActivityEntry]:
        """Heartbeat runs with the reviews they triggered, and manual reviews, newest first.

        ``plan`` (a name or id) keeps only that plan's heartbeat runs; the filter is part
        of the query, so ``limit`` and ``offset`` page the filtered list. Reads only.
        """
        if not 1 <= limit <= ACTIVITY_MAX_LIMIT:
            raise ConfigError(f"activity limit must be 1–{ACTIVITY_MAX_LIMIT}, got {limit}")
        if not 0 <= offset <= ACTIVITY_MAX_OFFSET:
            raise ConfigError(f"activity offset must be 0–{ACTIVITY_MAX_OFFSET:,}, got {offset}")
        with self._read() as c:
            heartbeats = _heartbeat_activity()
            if plan is None:
                combined = union_all(heartbeats, _manual_activity()).subquery("activity")
            else:
                plan_id = _resolve_plan(c, plan)
                combined = heartbeats.where(_runs.c.plan_id == plan_id).subquery("activity")
            rows = c.execute(
                select(combined)
                .order_by(combined.c.started_at.desc(), combined.c.activity_id.desc())
                .limit(limit)
                .offset(offset)
            ).mappings()
            return [_activity(row) for row in rows]


class HeartbeatRepository(HeartbeatReads):
    """``HeartbeatReads`` and the writes (plans, leases and outcomes), each one transaction."""

    def create_plan(self, values: PlanValues) -> HeartbeatPlan:
        """Save a new plan; its name must be free."""
        plan_id = str(uuid.uuid4())
        now = utcnow()
        with self._write() as c:
            _refuse_taken_name(c, values.name, None)
            c.execute(
                insert(_plans).values(
                    plan_id=plan_id,
                    **_plan_columns(c, values),
                    last_run_at=None,
                    lease_owner=None,
                    lease_attempt=0,
                    lease_expires_at=None,
                    created_at=now,
                    updated_at=now,
                )
            )
            return _load_plan(c, plan_id)

    def update_plan(self, plan_ref: str, values: PlanValues) -> HeartbeatPlan:
        """Replace a plan's settings; its lease, last run and history are kept."""
        with self._write() as c:
            plan_id = _resolve_plan(c, plan_ref)
            _refuse_taken_name(c, values.name, plan_id)
            c.execute(
                update(_plans)
                .where(_plans.c.plan_id == plan_id)
                .values(**_plan_columns(c, values), updated_at=utcnow())
            )
            return _load_plan(c, plan_id)

    def delete_plan(self, plan_ref: str) -> HeartbeatPlan:
        """Remove a plan and its heartbeat runs; returns the plan as it was."""
        with self._write() as c:
            plan = _load_plan(c, _resolve_plan(c, plan_ref))
            c.execute(delete(_runs).where(_runs.c.plan_id == plan.plan_id))
            c.execute(delete(_plans).where(_plans.c.plan_id == plan.plan_id))
            return plan

    def claim_due_plans(
        self,
        now: datetime,
        owner: str,
        lease_seconds: float,
        *,
        next_run: NextRun,
        limit: int | None = None,
    ) -> list[Claim]:
        """Claim enabled plans that are due (or whose owner's lease expired).

        A plan is claimable when its lease is free and its next run is at or before
        ``now``, or when its lease expired (the owner stopped mid-run: attempt + 1). Each
        claim is one transaction: lease taken, next run advanced past ``now``, heartbeat
        run created. A plan another owner claimed meanwhile is skipped.
        """
        lease = timedelta(seconds=lease_seconds)
        query = (
            select(_plans.c.plan_id)
            .where(_plans.c.enabled.is_(True), _claimable(now))
            .order_by(_plans.c.next_run_at, _plans.c.name)
        )
        with self._read() as c:
            candidates = list(c.execute(query).scalars())
        claims: list[Claim] = []
        for plan_id in candidates:
            if limit is not None and len(claims) >= limit:
                break
            with self._write() as c:
                claim = _claim(c, plan_id, now, owner, lease, next_run, scheduled=True)
            if claim is not None:
                claims.append(claim)
        return claims

    def claim_plan_now(
        self, plan_ref: str, now: datetime, owner: str, lease_seconds: float
    ) -> Claim:
        """Claim one plan out of schedule; its next scheduled run is left as it is."""
        with self._write() as c:
            plan = _load_plan(c, _resolve_plan(c, plan_ref))
            held = plan.lease_owner is not None and (
                plan.lease_expires_at is None or plan.lease_expires_at > now
            )
            if held:
                raise BusyError(
                    f"plan {plan.name!r} is running now (owner {plan.lease_owner}); "
                    "see `proctor activity --plan` and try again when it finishes"
                )
            claim = _claim(
                c, plan.plan_id, now, owner, timedelta(seconds=lease_seconds), None, False
            )
        assert claim is not None
        return claim

    def release_plan_lease(self, plan_id: str, owner: str, *, at: datetime) -> bool:
        """Free the lease if ``owner`` still holds it and note the run time."""
        with self._write() as c:
            done = c.execute(
                update(_plans)
                .where(_plans.c.plan_id == plan_id, _plans.c.lease_owner == owner)
                .values(
                    lease_owner=None,
                    lease_attempt=0,
                    lease_expires_at=None,
                    last_run_at=at,
                    updated_at=utcnow(),
                )
            )
            return done.rowcount == 1

    def set_heartbeat_outcome(
        self,
        heartbeat_id: str,
        *,
        status: str,
        phase: str,
        suggestions: int | None = None,
        error: str | None = None,
        finished: bool = True,
        review_run_id: str | None = None,
        result_id: str | None = None,
        at: datetime | None = None,
    ) -> HeartbeatRun:
        """Record what a heartbeat run did; fields left None keep their stored value."""
        values: dict[str, Any] = {"status": status, "phase": phase}
        if suggestions is not None:
            values["suggestions"] = suggestions
        if error is not None:
            values["error"] = error
        if review_run_id is not None:
            values["review_run_id"] = review_run_id
        if result_id is not None:
            values["result_id"] = result_id
        values["finished_at"] = (at or utcnow()) if finished else None
        with self._write() as c:
            full = _resolve_heartbeat(c, heartbeat_id)
            c.execute(update(_runs).where(_runs.c.heartbeat_id == full).values(values))
            return _heartbeat(c.execute(select(_runs).where(_runs.c.heartbeat_id == full)).one())


# -- helpers ------------------------------------------------------------------------------


def _claimable(now: datetime) -> Any:
    free_and_due = and_(
        _plans.c.lease_owner.is_(None),
        _plans.c.next_run_at.is_not(None),
        _plans.c.next_run_at <= now,
    )
    expired = and_(_plans.c.lease_owner.is_not(None), _plans.c.lease_expires_at <= now)
    return or_(free_and_due, expired)


def _claim(
    c: Connection,
    plan_id: str,
    now: datetime,
    owner: str,
    lease: timedelta,
    next_run: NextRun | None,
    scheduled: bool,
) -> Claim | None:
    row = c.execute(_plan_query().where(_plans.c.plan_id == plan_id)).mappings().first()
    if row is None:
        return None
    plan = _plan(row)
    if scheduled:
        ok = c.execute(
            select(_plans.c.plan_id).where(
                _plans.c.plan_id == plan_id, _plans.c.enabled.is_(True), _claimable(now)
            )
        ).first()
        if ok is None:
            return None
    due_at = plan.next_run_at if scheduled and plan.next_run_at is not None else now
    if plan.lease_owner is not None:
        # The previous owner stopped mid-run: its open heartbeat run is abandoned and this
        # claim retries the same due time.
        open_run = c.execute(
            select(_runs.c.heartbeat_id, _runs.c.due_at)
            .where(_runs.c.plan_id == plan_id, _runs.c.finished_at.is_(None))
            .order_by(_runs.c.started_at.desc())
            .limit(1)
        ).first()
        if open_run is not None:
            due_at = open_run.due_at
            c.execute(
                update(_runs)
                .where(_runs.c.heartbeat_id == open_run.heartbeat_id)
                .values(
                    status="abandoned",
                    phase="done",
                    error=f"owner {plan.lease_owner} stopped; its lease expired",
                    finished_at=now,
                )
            )
    attempt = plan.lease_attempt + 1
    next_run_at = plan.next_run_at
    if next_run is not None and (next_run_at is None or next_run_at <= now):
        next_run_at = next_run(plan, now)
    expires = now + lease
    taken = c.execute(
        update(_plans)
        .where(
            _plans.c.plan_id == plan_id,
            _plans.c.lease_attempt == plan.lease_attempt,
            _plans.c.lease_owner.is_(None)
            if plan.lease_owner is None
            else _plans.c.lease_owner == plan.lease_owner,
        )
        .values(
            lease_owner=owner,
            lease_attempt=attempt,
            lease_expires_at=expires,
            next_run_at=next_run_at,
            updated_at=utcnow(),
        )
    )
    if taken.rowcount != 1:
        return None
    heartbeat_id = str(uuid.uuid4())
    c.execute(
        insert(_runs).values(
            heartbeat_id=heartbeat_id,
            plan_id=plan_id,
            due_at=due_at,
            attempt=attempt,
            owner=owner,
            status="claimed",
            phase="claimed",
            suggestions=0,
            started_at=now,
        )
    )
    return Claim(heartbeat_id, _load_plan(c, plan_id), due_at, attempt, owner, expires)


def _plan_columns(c: Connection, values: PlanValues) -> dict[str, Any]:
    project_id = None
    if values.project is not None:
        project_id = c.execute(
            select(t.projects.c.project_id).where(t.projects.c.name == values.project)
        ).scalar()
        if project_id is None:
            raise NotFoundError(
                f"no project {values.project!r}; see `proctor conversations list` for projects"
            )
    return {
        "name": values.name,
        "project_id": project_id,
        "scope_key": "all" if project_id is None else f"project:{project_id}",
        "recurrence": values.recurrence,
        "time_of_day": values.time_of_day,
        "weekdays": list(values.weekdays),
        "timezone": values.timezone,
        "enabled": values.enabled,
        "intervention": values.intervention,
        "window_hours": values.window_hours,
        "next_run_at": values.next_run_at,
    }


def _refuse_taken_name(c: Connection, name: str, plan_id: str | None) -> None:
    other = c.execute(select(_plans.c.plan_id).where(_plans.c.name == name)).scalar()
    if other is not None and other != plan_id:
        raise ConfigError(f"a plan named {name!r} exists; choose another name or edit that one")


def _resolve_plan(c: Connection, ref: str) -> str:
    ref = ref.strip()
    if not ref:
        raise NotFoundError("no plan name or id given")
    by_name = c.execute(select(_plans.c.plan_id).where(_plans.c.name == ref)).scalar()
    if by_name is not None:
        return str(by_name)
    rows = c.execute(
        select(_plans.c.plan_id).where(_plans.c.plan_id.startswith(ref, autoescape=True)).limit(2)
    ).all()
    if not rows:
        raise NotFoundError(f"no plan {ref!r}; see `proctor plans list`")
    if len(rows) > 1:
        raise NotFoundError(f"plan id {ref!r} is ambiguous; give more characters or the name")
    return str(rows[0][0])


def _resolve_heartbeat(c: Connection, ref: str) -> str:
    ref = ref.strip()
    rows = (
        c.execute(
            select(_runs.c.heartbeat_id)
            .where(_runs.c.heartbeat_id.startswith(ref, autoescape=True))
            .limit(2)
        ).all()
        if ref
        else []
    )
    if not rows:
        raise NotFoundError(f"no heartbeat run {ref!r}; see `proctor activity`")
    if len(rows) > 1:
        raise NotFoundError(f"heartbeat run id {ref!r} is ambiguous; give more characters")
    return str(rows[0][0])


def _plan_query() -> Any:
    return select(_plans, t.projects.c.name.label("project_name")).select_from(
        _plans.outerjoin(t.projects, t.projects.c.project_id == _plans.c.project_id)
    )


def _load_plan(c: Connection, plan_id: str) -> HeartbeatPlan:
    row = c.execute(_plan_query().where(_plans.c.plan_id == plan_id)).mappings().one()
    return _plan(row)


def _plan(row: Any) -> HeartbeatPlan:
    return HeartbeatPlan(
        plan_id=row["plan_id"],
        name=row["name"],
        project_id=row["project_id"],
        project_name=row["project_name"],
        scope_key=row["scope_key"],
        recurrence=row["recurrence"],
        time_of_day=row["time_of_day"],
        weekdays=tuple(int(day) for day in row["weekdays"]),
        timezone=row["timezone"],
        enabled=bool(row["enabled"]),
        intervention=row["intervention"],
        window_hours=row["window_hours"],
        next_run_at=row["next_run_at"],
        last_run_at=row["last_run_at"],
        lease_owner=row["lease_owner"],
        lease_attempt=row["lease_attempt"],
        lease_expires_at=row["lease_expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _heartbeat(row: Any) -> HeartbeatRun:
    m = row._mapping
    return HeartbeatRun(**{name: m[name] for name in HeartbeatRun.__slots__})


def _heartbeat_activity() -> Any:
    review = t.review_runs
    plan_project = t.projects.alias("plan_project")
    return select(
        literal("heartbeat", String).label("kind"),
        _runs.c.heartbeat_id.label("activity_id"),
        _runs.c.plan_id.label("plan_id"),
        _plans.c.name.label("plan_name"),
        _runs.c.status.label("status"),
        _runs.c.phase.label("phase"),
        func.coalesce(plan_project.c.name, "all").label("scope"),
        _runs.c.started_at.label("started_at"),
        _runs.c.finished_at.label("finished_at"),
        func.coalesce(_runs.c.error, review.c.error).label("error"),
        t.results.c.summary.label("summary"),
        func.coalesce(_runs.c.result_id, review.c.result_id).label("result_id"),
        _runs.c.review_run_id.label("review_run_id"),
        review.c.status.label("review_status"),
        func.coalesce(review.c.model_calls, 0).label("model_calls"),
        _runs.c.suggestions.label("suggestions"),
    ).select_from(
        _runs.join(_plans, _plans.c.plan_id == _runs.c.plan_id)
        .outerjoin(plan_project, plan_project.c.project_id == _plans.c.project_id)
        .outerjoin(review, review.c.run_id == _runs.c.review_run_id)
        .outerjoin(t.results, t.results.c.run_id == review.c.run_id)
    )


def _manual_activity() -> Any:
    review = t.review_runs
    return (
        select(
            literal("manual", String).label("kind"),
            review.c.run_id.label("activity_id"),
            cast(null(), String).label("plan_id"),
            cast(null(), String).label("plan_name"),
            review.c.status.label("status"),
            cast(null(), String).label("phase"),
            func.coalesce(t.projects.c.name, "all").label("scope"),
            review.c.created_at.label("started_at"),
            review.c.finished_at.label("finished_at"),
            review.c.error.label("error"),
            t.results.c.summary.label("summary"),
            review.c.result_id.label("result_id"),
            review.c.run_id.label("review_run_id"),
            review.c.status.label("review_status"),
            review.c.model_calls.label("model_calls"),
            cast(null(), Integer).label("suggestions"),
        )
        .select_from(
            review.outerjoin(t.projects, t.projects.c.project_id == review.c.project_id).outerjoin(
                t.results, t.results.c.run_id == review.c.run_id
            )
        )
        .where(review.c.trigger == "manual")
    )


def _activity(row: Any) -> ActivityEntry:
    return ActivityEntry(
        kind=row["kind"],
        activity_id=row["activity_id"],
        plan_id=row["plan_id"],
        plan_name=row["plan_name"],
        status=row["status"],
        phase=row["phase"],
        scope=row["scope"],
        started_at=_aware(row["started_at"]),
        finished_at=_aware(row["finished_at"]),
        error=row["error"],
        summary=row["summary"],
        result_id=row["result_id"],
        review_run_id=row["review_run_id"],
        review_status=row["review_status"],
        model_calls=int(row["model_calls"] or 0),
        suggestions=row["suggestions"],
    )


def _aware(value: Any) -> Any:
    """Union columns may come back as SQLite text; every time leaves the store aware UTC."""
    from proctor.store._schema import UTCDateTime

    return UTCDateTime().process_result_value(value, None)  # type: ignore[arg-type]
