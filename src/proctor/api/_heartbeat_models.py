"""Wire documents of heartbeat plans and suggestions (HB-2, HB-3, HB-5, HB-6)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.heartbeat import HeartbeatPlan, describe_schedule
from proctor.store import SuggestionRecord

Weekdays = list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"] | int]
"""Days of a weekly plan: names or 0 (Monday) … 6 (Sunday)."""

TIME_PATTERN = r"^\d{1,2}:\d{2}$"


class PlanView(WireModel):
    """A saved plan with its schedule in words and its state."""

    plan_id: str
    name: str
    project_id: str | None
    project_name: str | None
    scope: str
    """The project name, or ``all``."""
    scope_key: str
    recurrence: Literal["daily", "weekly"]
    time_of_day: str
    """``HH:MM`` in the plan's timezone."""
    weekdays: list[int]
    """0 (Monday) … 6 (Sunday), for weekly plans."""
    timezone: str
    schedule: str
    """``daily 09:00`` or ``weekly mon,thu 09:00``."""
    enabled: bool
    state: Literal["enabled", "disabled", "running"]
    intervention: Literal["memory_only", "suggest"]
    window_hours: int | None
    """Review only the last N hours; null: everything new since the last review."""
    next_run_at: datetime | None
    last_run_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, plan: HeartbeatPlan) -> PlanView:
        """The view of a saved plan."""
        data = asdict(plan)
        for lease in ("lease_owner", "lease_attempt", "lease_expires_at"):
            data.pop(lease)
        state: Literal["enabled", "disabled", "running"] = (
            "running"
            if plan.lease_owner is not None
            else ("enabled" if plan.enabled else "disabled")
        )
        return cls(
            **data,
            scope=plan.scope,
            schedule=describe_schedule(plan),
            state=state,
        )


class PlanPage(WireModel):
    """Plans by name."""

    limit: int
    offset: int
    total: int
    plans: list[PlanView]


class PlanBody(BaseModel):
    """A new plan (mirrors ``proctor plans add``)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    """Unique; how the plan is called."""
    project: str | None = Field(default=None, min_length=1, max_length=500)
    """Review one project (default: every project)."""
    recurrence: Literal["daily", "weekly"]
    time: str = Field(pattern=TIME_PATTERN, description="Local time HH:MM (24-hour clock).")
    weekdays: Weekdays = Field(default_factory=list, max_length=7)
    """Days of a weekly plan."""
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    """IANA timezone (default: the server's zone)."""
    enabled: bool = True
    intervention: Literal["memory_only", "suggest"] = "suggest"
    window_hours: int | None = Field(default=None, ge=1, le=24 * 366)


class PlanChanges(BaseModel):
    """What to change on a plan; fields left out are kept (mirrors ``proctor plans edit``)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=200)
    project: str | None = Field(default=None, min_length=1, max_length=500)
    """Review this project (see ``all_projects``)."""
    all_projects: bool = False
    """Review every project instead of one."""
    recurrence: Literal["daily", "weekly"] | None = None
    time: str | None = Field(default=None, pattern=TIME_PATTERN)
    weekdays: Weekdays | None = Field(default=None, max_length=7)
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    enabled: bool | None = None
    """Switch the plan on (scheduled from now; missed times are not run) or off."""
    intervention: Literal["memory_only", "suggest"] | None = None
    window_hours: int | None = Field(default=None, ge=1, le=24 * 366)
    no_window: bool = False
    """Review everything new since the last review (drops ``window_hours``)."""


class SuggestionPage(WireModel):
    """Suggestions, newest first."""

    limit: int
    offset: int
    suggestions: list[SuggestionRecord]
