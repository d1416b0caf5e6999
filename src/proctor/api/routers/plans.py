"""Heartbeat plans: list, show, create, update, delete (HB-2, HB-3).

Plans are validated by the same drafts as ``proctor plans``; an invalid value is refused
with a sentence naming the field. Saving computes the next run from now.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from proctor._util.clock import utcnow
from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.api._heartbeat_models import PlanBody, PlanChanges, PlanPage, PlanView
from proctor.errors import ConfigError
from proctor.heartbeat import (
    draft_from_plan,
    draft_plan,
    local_timezone,
    save_plan,
    save_plan_edit,
    set_plan_enabled,
)

router = APIRouter(prefix="/plans", tags=["heartbeat"])

PlanRef = Annotated[
    str, Path(min_length=1, max_length=200, description="A plan's name, id or unique id prefix.")
]


@router.get("")
def list_plans(store: ReaderDep, limit: Limit = 50, offset: Offset = 0) -> PlanPage:
    """Plans by name, with schedule, state and next run (UTC)."""
    plans = store.plans()
    page = [PlanView.of(p) for p in plans[offset : offset + limit]]
    return PlanPage(limit=limit, offset=offset, total=len(plans), plans=page)


@router.get("/{plan_ref}")
def show_plan(store: ReaderDep, plan_ref: PlanRef) -> PlanView:
    """One plan."""
    return PlanView.of(store.plan(plan_ref))


@router.post("", status_code=201)
def create_plan(store: StoreDep, body: PlanBody) -> PlanView:
    """Save a new plan; it first runs at its next scheduled time."""
    draft = draft_plan(
        name=body.name,
        scope=body.project,
        recurrence=body.recurrence,
        time=body.time,
        weekdays=tuple(body.weekdays),
        timezone=body.timezone or local_timezone(),
        enabled=body.enabled,
        intervention=body.intervention,
        window_hours=body.window_hours,
    )
    return PlanView.of(save_plan(store, draft, now=utcnow()))


@router.patch("/{plan_ref}")
def update_plan(store: StoreDep, plan_ref: PlanRef, body: PlanChanges) -> PlanView:
    """Change a plan; what is not given is kept. Enabling schedules it from now."""
    if body.project is not None and body.all_projects:
        raise ConfigError("give project or all_projects, not both")
    if body.window_hours is not None and body.no_window:
        raise ConfigError("give window_hours or no_window, not both")
    changes: dict[str, Any] = {
        key: value
        for key, value in (
            ("name", body.name),
            ("recurrence", body.recurrence),
            ("time", body.time),
            ("timezone", body.timezone),
            ("intervention", body.intervention),
            ("enabled", body.enabled),
        )
        if value is not None
    }
    if body.weekdays is not None:
        changes["weekdays"] = tuple(body.weekdays)
    if body.project is not None or body.all_projects:
        changes["scope"] = body.project
    if body.window_hours is not None or body.no_window:
        changes["window_hours"] = body.window_hours
    now = utcnow()
    plan = store.plan(plan_ref)
    if set(changes) == {"enabled"}:
        return PlanView.of(set_plan_enabled(store, plan.plan_id, changes["enabled"], now=now))
    draft = draft_from_plan(plan, **changes)
    return PlanView.of(save_plan_edit(store, plan.plan_id, draft, now=now))


@router.delete("/{plan_ref}")
def delete_plan(store: StoreDep, plan_ref: PlanRef) -> PlanView:
    """Delete a plan and its heartbeat history (published results stay); returns it as it was."""
    return PlanView.of(store.delete_plan(plan_ref))
