"""What the heartbeat store hands back: plans, claims, heartbeat runs and activity (HB-2…7)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from proctor.store._review_records import RunStatus

Recurrence = Literal["daily", "weekly"]
Intervention = Literal["memory_only", "suggest"]

HeartbeatStatus = Literal[
    "claimed",
    "running",
    "completed",
    "no_change",
    "suggestions_failed",
    "failed",
    "paused",
    "cancelled",
    "abandoned",
]
"""A heartbeat run: ``claimed`` → ``running`` → one of the outcomes. ``abandoned``: its
owner stopped and the lease expired; the next attempt has its own row."""

HeartbeatPhase = Literal["claimed", "reviewing", "suggesting", "suggestions", "done"]
"""Where a heartbeat run is. ``suggestions`` is what a failed suggestions retry records
(``proctor suggestions retry``) for the phase the scheduler calls ``suggesting``: two
words for one phase, kept as stored."""

ActivityStatus = HeartbeatStatus | RunStatus
"""An activity line's status: its heartbeat run's, or a manual review's run status."""

NO_CHANGE_NOTE = "no change (no model call)"

OUTCOME_TEXT: dict[str, str] = {
    "claimed": "claimed",
    "running": "running",
    "completed": "updated",
    "no_change": NO_CHANGE_NOTE,
    "suggestions_failed": "updated, suggestions failed",
    "failed": "failed",
    "paused": "paused",
    "cancelled": "cancelled",
    "abandoned": "abandoned (owner stopped)",
}
"""How activity words a status (HB-6, HB-7)."""

ACTIVITY_MAX_LIMIT = 100
ACTIVITY_MAX_OFFSET = 100_000


@dataclass(frozen=True, slots=True)
class PlanValues:
    """A plan as it is saved: the validated draft plus its computed next run."""

    name: str
    project: str | None
    """A project name; None: every project."""
    recurrence: Recurrence
    time_of_day: str
    """``HH:MM``, local to ``timezone``."""
    weekdays: tuple[int, ...]
    """0 = Monday … 6 = Sunday; empty for daily plans."""
    timezone: str
    """An IANA zone name."""
    enabled: bool
    intervention: Intervention
    window_hours: int | None
    """Review only the last N hours; None: everything new since the last review."""
    next_run_at: datetime | None


@dataclass(frozen=True, slots=True)
class HeartbeatPlan:
    """One saved plan with its schedule state and lease."""

    plan_id: str
    name: str
    project_id: str | None
    project_name: str | None
    scope_key: str
    recurrence: Recurrence
    time_of_day: str
    weekdays: tuple[int, ...]
    timezone: str
    enabled: bool
    intervention: Intervention
    window_hours: int | None
    next_run_at: datetime | None
    last_run_at: datetime | None
    lease_owner: str | None
    lease_attempt: int
    lease_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @property
    def scope(self) -> str:
        """The project name, or ``all``."""
        return self.project_name or "all"


@dataclass(frozen=True, slots=True)
class HeartbeatRun:
    """One firing of a plan (a row of ``heartbeat_runs``)."""

    heartbeat_id: str
    plan_id: str
    due_at: datetime
    attempt: int
    owner: str
    status: HeartbeatStatus
    phase: HeartbeatPhase
    review_run_id: str | None
    result_id: str | None
    error: str | None
    suggestions: int
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class Claim:
    """A due plan this owner now holds the lease of, with the heartbeat run it fires."""

    heartbeat_id: str
    plan: HeartbeatPlan
    """The plan as claimed (next run already advanced)."""
    due_at: datetime
    attempt: int
    """1 for the first try of this due time; +1 for each re-claim after an expired lease."""
    owner: str
    lease_expires_at: datetime


@dataclass(frozen=True, slots=True)
class ActivityEntry:
    """One line of activity: a heartbeat run (with its review) or a manual review (HB-7)."""

    kind: Literal["heartbeat", "manual"]
    activity_id: str
    """The heartbeat id, or the review run id of a manual review."""
    plan_id: str | None
    plan_name: str | None
    status: ActivityStatus
    phase: HeartbeatPhase | None
    scope: str
    """The project name, or ``all``."""
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    summary: str | None
    """The published result's summary."""
    result_id: str | None
    review_run_id: str | None
    review_status: RunStatus | None
    model_calls: int
    suggestions: int | None

    @property
    def outcome(self) -> str:
        """What happened in words: ``no change (no model call)``, ``updated``, …"""
        if self.review_status == "no_change" or self.status == "no_change":
            return NO_CHANGE_NOTE
        if self.kind == "manual":
            return "updated" if self.status == "completed" else self.status
        return OUTCOME_TEXT.get(self.status, self.status)


NextRun = Callable[[HeartbeatPlan, datetime], datetime]
"""The plan's next run strictly after a time (``proctor.heartbeat.next_run_at``)."""


class HeartbeatRecords(Protocol):
    """Plans, leases, heartbeat runs and activity (see ``_heartbeat_store.py``)."""

    def create_plan(self, values: PlanValues) -> HeartbeatPlan:
        """Save a new plan; its name must be free."""
        ...

    def update_plan(self, plan_ref: str, values: PlanValues) -> HeartbeatPlan:
        """Replace a plan's settings (lease and history kept)."""
        ...

    def delete_plan(self, plan_ref: str) -> HeartbeatPlan:
        """Remove a plan and its heartbeat runs."""
        ...

    def plan(self, plan_ref: str) -> HeartbeatPlan:
        """One plan by name, id or unique id prefix."""
        ...

    def plans(self) -> list[HeartbeatPlan]:
        """Every plan, by name."""
        ...

    def claim_due_plans(
        self,
        now: datetime,
        owner: str,
        lease_seconds: float,
        *,
        next_run: NextRun,
        limit: int | None = None,
    ) -> list[Claim]:
        """Claim due plans whose lease is free or expired; one transaction per plan."""
        ...

    def claim_plan_now(
        self, plan_ref: str, now: datetime, owner: str, lease_seconds: float
    ) -> Claim:
        """Claim one plan out of schedule (run now); BusyError while its lease is held."""
        ...

    def release_plan_lease(self, plan_id: str, owner: str, *, at: datetime) -> bool:
        """Free the lease if ``owner`` holds it; False when it does not any more."""
        ...

    def set_heartbeat_outcome(
        self,
        heartbeat_id: str,
        *,
        status: HeartbeatStatus,
        phase: HeartbeatPhase,
        suggestions: int | None = None,
        error: str | None = None,
        finished: bool = True,
        review_run_id: str | None = None,
        result_id: str | None = None,
        at: datetime | None = None,
    ) -> HeartbeatRun:
        """Record what a heartbeat run did (given fields only)."""
        ...

    def heartbeat_run(self, heartbeat_id: str) -> HeartbeatRun:
        """One heartbeat run by id or unique prefix."""
        ...

    def heartbeat_runs(self, *, plan: str | None = None, limit: int = 50) -> list[HeartbeatRun]:
        """Heartbeat runs, newest first, optionally of one plan."""
        ...

    def activity(
        self, plan: str | None = None, limit: int = 20, offset: int = 0
    ) -> list[ActivityEntry]:
        """Heartbeat runs with their reviews, and manual reviews: newest first."""
        ...
