"""Supervising stored conversations: the rules (``check``) and live model supervision.

``check_conversations`` runs the deterministic rules and records their findings. Live
supervision is off until a session is enabled for a target (``enable_supervision``);
then ``on_conversations_changed`` — called after ingest and watch write conversations —
fires the session's triggers and runs analyses under the throttle, single-flight,
coalescing and budget rules of ``Scheduler``; ``run_due_analyses`` is the idle tick that
starts pending analyses once they may run; ``LiveSupervision`` bundles both for a
long-running process.
"""

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
