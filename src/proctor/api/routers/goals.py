"""A conversation's goal (GOAL-1…3): its versions, each user turn's intent, goal findings.

Reads only what goal tracking recorded (``proctor check`` with the lexical classifier
when no model is configured, model supervision in ``goal`` mode otherwise); the
``source_id`` of a version or a turn is the user message, which the transcript shows.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from fastapi import APIRouter

from proctor.api._base_models import WireModel
from proctor.api._deps import ReaderDep
from proctor.findings import Finding
from proctor.store import GoalVersion, IntentLabel

if TYPE_CHECKING:
    from proctor.supervision import GoalView

router = APIRouter(prefix="/conversations", tags=["goals"])


class GoalVersionOut(WireModel):
    """One goal version."""

    version: int
    goal: str
    goal_hash: str
    reason: str
    """``initial``, ``task``, or the intent that re-goaled: refine, expand, correct,
    new_goal, cancel."""
    source_id: str | None
    """The user turn (message) that set it."""
    created_at: datetime | None
    closed: bool
    """The user cancelled the goal."""

    @classmethod
    def of(cls, version: GoalVersion) -> GoalVersionOut:
        return cls(
            version=version.version,
            goal=version.goal,
            goal_hash=version.goal_hash,
            reason=version.reason,
            source_id=version.source_id,
            created_at=version.created_at,
            closed=version.closed,
        )


class IntentOut(WireModel):
    """How a user turn was classified."""

    intent: str
    confidence: float
    low_confidence: bool
    """Under the threshold: recorded, but it never changed the goal."""
    goal_version: int | None
    """The version in force when the turn arrived."""
    classifier: str
    """``lexical`` or the model that classified it."""

    @classmethod
    def of(cls, label: IntentLabel) -> IntentOut:
        return cls(
            intent=label.intent,
            confidence=label.confidence,
            low_confidence=label.low_confidence,
            goal_version=label.goal_version,
            classifier=label.model or "lexical",
        )


class GoalTurnOut(WireModel):
    """A typed user turn with its label and the version it set."""

    source_id: str
    text: str
    created_at: datetime | None
    intent: IntentOut | None
    """None until goal tracking labelled the turn."""
    set_version: int | None


class TaskGoalOut(WireModel):
    """A task's goal versions."""

    task_id: str
    title: str
    versions: list[GoalVersionOut]


class GoalsOut(WireModel):
    """The goal of one conversation as recorded."""

    conversation_id: str
    current: GoalVersionOut | None
    versions: list[GoalVersionOut]
    turns: list[GoalTurnOut]
    tasks: list[TaskGoalOut]
    findings: list[Finding]
    """Goal findings: drift, context loss, unverified completion, the model's goal mode."""

    @classmethod
    def of(cls, view: GoalView) -> GoalsOut:
        return cls(
            conversation_id=view.conversation_id,
            current=None if view.current is None else GoalVersionOut.of(view.current),
            versions=[GoalVersionOut.of(v) for v in view.versions],
            turns=[
                GoalTurnOut(
                    source_id=turn.source_id,
                    text=turn.text,
                    created_at=turn.created_at,
                    intent=None if turn.label is None else IntentOut.of(turn.label),
                    set_version=turn.set_version,
                )
                for turn in view.turns
            ],
            tasks=[
                TaskGoalOut(
                    task_id=task.task_id,
                    title=task.title,
                    versions=[GoalVersionOut.of(v) for v in task.versions],
                )
                for task in view.tasks
            ],
            findings=list(view.findings),
        )


@router.get("/{conversation_ref}/goals")
def conversation_goals(store: ReaderDep, conversation_ref: str) -> GoalsOut:
    """Goal versions, each user turn's intent label and the goal findings of a conversation."""
    from proctor.supervision import goal_view

    return GoalsOut.of(goal_view(store, store.resolve_conversation_id(conversation_ref)))
