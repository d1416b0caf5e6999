"""Heartbeat plans, due processing, activity and suggestions (HB-1…HB-7).

The app switch (``_app.py``), plans and their recurrence (``_plans.py``,
``_recurrence.py``) and the scheduler that claims due plans and runs the review
pipeline for them (``_scheduler.py``). Suggestions live in ``proctor.heartbeat.suggestions``.

Names are imported when first used: ``proctor review run`` asks only ``require_app`` and
must not load the scheduler (which imports the model callers) to do so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proctor._util.lazy import lazy_exports

if TYPE_CHECKING:
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

_WHERE = {
    "APP_ENABLED_SETTING": "proctor.heartbeat._app",
    "app_enabled": "proctor.heartbeat._app",
    "require_app": "proctor.heartbeat._app",
    "set_app_enabled": "proctor.heartbeat._app",
    "PlanDraft": "proctor.heartbeat._plans",
    "draft_from_plan": "proctor.heartbeat._plans",
    "draft_plan": "proctor.heartbeat._plans",
    "local_timezone": "proctor.heartbeat._plans",
    "save_plan": "proctor.heartbeat._plans",
    "save_plan_edit": "proctor.heartbeat._plans",
    "set_plan_enabled": "proctor.heartbeat._plans",
    "describe_schedule": "proctor.heartbeat._recurrence",
    "next_run_at": "proctor.heartbeat._recurrence",
    "DEFAULT_LEASE_SECONDS": "proctor.heartbeat._scheduler",
    "HeartbeatOutcome": "proctor.heartbeat._scheduler",
    "run_due": "proctor.heartbeat._scheduler",
    "run_now": "proctor.heartbeat._scheduler",
    "worker_owner": "proctor.heartbeat._scheduler",
    "ActivityEntry": "proctor.store",
    "Claim": "proctor.store",
    "HeartbeatPlan": "proctor.store",
    "HeartbeatRun": "proctor.store",
    "PlanValues": "proctor.store",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


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
