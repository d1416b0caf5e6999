"""Heartbeat plans, due processing, activity and suggestions (HB-1…HB-7).

The app switch (``_app.py``), plans and their recurrence (``_plans.py``,
``_recurrence.py``) and the scheduler that claims due plans and runs the review
pipeline for them (``_scheduler.py``). Suggestions live in ``proctor.heartbeat.suggestions``.
"""

from proctor.heartbeat._app import (
    APP_ENABLED_SETTING,
    app_enabled,
    require_app,
    set_app_enabled,
)
from proctor.heartbeat._plans import (
    PlanDraft,
    draft_from_plan,
    draft_plan,
    local_timezone,
    save_plan,
    save_plan_edit,
    set_plan_enabled,
)
from proctor.heartbeat._recurrence import describe_schedule, next_run_at
from proctor.heartbeat._scheduler import (
    DEFAULT_LEASE_SECONDS,
    HeartbeatOutcome,
    run_due,
    run_now,
    worker_owner,
)
from proctor.store import ActivityEntry, Claim, HeartbeatPlan, HeartbeatRun, PlanValues

__all__ = [
    "APP_ENABLED_SETTING",
    "DEFAULT_LEASE_SECONDS",
    "ActivityEntry",
    "Claim",
    "HeartbeatOutcome",
    "HeartbeatPlan",
    "HeartbeatRun",
    "PlanDraft",
    "PlanValues",
    "app_enabled",
    "describe_schedule",
    "draft_from_plan",
    "draft_plan",
    "local_timezone",
    "next_run_at",
    "require_app",
    "run_due",
    "run_now",
    "save_plan",
    "save_plan_edit",
    "set_app_enabled",
    "set_plan_enabled",
    "worker_owner",
]
