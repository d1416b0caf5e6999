"""Supervising stored conversations: the rules (``check``) and live model supervision.

``check_conversations`` runs the deterministic rules and records their findings. Live
supervision is off until a session is enabled for a target (``enable_supervision``);
then ``on_conversations_changed`` — called after ingest and watch write conversations —
fires the session's triggers and runs analyses under the throttle, single-flight,
coalescing and budget rules of ``Scheduler``; ``run_due_analyses`` is the idle tick that
starts pending analyses once they may run; ``LiveSupervision`` bundles both for a
long-running process.

Names are imported when first used: the API's session routes need ``SessionStatus``,
not the rules and the model supervisor behind ``check_conversations`` (issue 18).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proctor._util.lazy import lazy_exports

if TYPE_CHECKING:
    from proctor.supervision._check import CheckResult, check_conversations
    from proctor.supervision._execute import ModelExecutor
    from proctor.supervision._goal_view import GOAL_RULES, GoalTurn, GoalView, TaskGoals, goal_view
    from proctor.supervision._hook import (
        QUEUED,
        LiveSupervision,
        on_conversations_changed,
        queued_analyses,
        run_due_analyses,
        supervise_changes,
        supervise_due,
    )
    from proctor.supervision._scheduler import (
        Analysis,
        AnalysisResult,
        Clock,
        Executor,
        ScheduleOutcome,
        Scheduler,
        SystemClock,
    )
    from proctor.supervision._sessions import (
        MODES,
        TRIGGERS,
        SessionSettings,
        SessionState,
        SessionStatus,
        SessionStore,
        Target,
        Trigger,
        budget_spent,
        disable_supervision,
        enable_supervision,
        resolve_target,
        session_status,
    )
    from proctor.supervision._triggers import Observation, fired_triggers, observe

_WHERE = {
    "CheckResult": "_check",
    "check_conversations": "_check",
    "ModelExecutor": "_execute",
    "GOAL_RULES": "_goal_view",
    "GoalTurn": "_goal_view",
    "GoalView": "_goal_view",
    "TaskGoals": "_goal_view",
    "goal_view": "_goal_view",
    "QUEUED": "_hook",
    "LiveSupervision": "_hook",
    "on_conversations_changed": "_hook",
    "queued_analyses": "_hook",
    "run_due_analyses": "_hook",
    "supervise_changes": "_hook",
    "supervise_due": "_hook",
    "Analysis": "_scheduler",
    "AnalysisResult": "_scheduler",
    "Clock": "_scheduler",
    "Executor": "_scheduler",
    "ScheduleOutcome": "_scheduler",
    "Scheduler": "_scheduler",
    "SystemClock": "_scheduler",
    "MODES": "_sessions",
    "TRIGGERS": "_sessions",
    "SessionSettings": "_sessions",
    "SessionState": "_sessions",
    "SessionStatus": "_sessions",
    "SessionStore": "_sessions",
    "Target": "_sessions",
    "Trigger": "_sessions",
    "budget_spent": "_sessions",
    "disable_supervision": "_sessions",
    "enable_supervision": "_sessions",
    "resolve_target": "_sessions",
    "session_status": "_sessions",
    "Observation": "_triggers",
    "fired_triggers": "_triggers",
    "observe": "_triggers",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


__all__ = [
    "GOAL_RULES",
    "MODES",
    "QUEUED",
    "TRIGGERS",
    "Analysis",
    "AnalysisResult",
    "CheckResult",
    "Clock",
    "Executor",
    "GoalTurn",
    "GoalView",
    "LiveSupervision",
    "ModelExecutor",
    "Observation",
    "ScheduleOutcome",
    "Scheduler",
    "SessionSettings",
    "SessionState",
    "SessionStatus",
    "SessionStore",
    "SystemClock",
    "Target",
    "TaskGoals",
    "Trigger",
    "budget_spent",
    "check_conversations",
    "disable_supervision",
    "enable_supervision",
    "fired_triggers",
    "goal_view",
    "observe",
    "on_conversations_changed",
    "queued_analyses",
    "resolve_target",
    "run_due_analyses",
    "session_status",
    "supervise_changes",
    "supervise_due",
]
