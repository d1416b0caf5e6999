"""What a person sees of a conversation's goal (GOAL-1…3): versions, turn labels, findings.

``goal_view`` reads what goal tracking stored — the goal versions of the conversation
and of its tasks, each user turn's intent label — and the goal findings (the three
deterministic detectors and the supervisor's ``goal`` mode), and puts them side by side
with the user turns they came from. It writes nothing: ``proctor check`` and model
supervision record the goal; ``proctor goals``, the API and the goal panel show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from proctor._util.text import one_line
from proctor.findings import Finding
from proctor.store import GoalVersion, IntentLabel, ReadStore
from proctor.supervisor import user_turns

GOAL_RULES: tuple[str, ...] = (
    "goal.drift",
    "goal.context_loss",
    "goal.unverified_completion",
    "supervisor.goal",
)
"""The rules whose findings are about the goal (GOAL-3 and the model's ``goal`` mode)."""
TURN_CHARS = 280
"""A user turn's text as shown beside its label: its start."""
FINDINGS_LIMIT = 200
"""Goal findings shown per rule (the findings stream pages through all of them)."""


@dataclass(frozen=True, slots=True)
class GoalTurn:
    """One typed user turn, its intent label and the goal version it set, if any."""

    source_id: str
    """The message: what the transcript view shows with ``view.show({source_id})``."""
    text: str
    """The start of what the user typed (``TURN_CHARS``)."""
    created_at: datetime | None
    label: IntentLabel | None
    """None until goal tracking has labelled the turn."""
    set_version: int | None
    """The goal version this turn created, if it created one."""


@dataclass(frozen=True, slots=True)
class TaskGoals:
    """A task of the conversation and its goal versions."""

    task_id: str
    title: str
    versions: tuple[GoalVersion, ...]


@dataclass(frozen=True, slots=True)
class GoalView:
    """A conversation's goal as recorded: current, history, turns, tasks, findings."""

    conversation_id: str
    current: GoalVersion | None
    """The latest version (``closed`` when the user cancelled it)."""
    versions: tuple[GoalVersion, ...]
    """Every version, oldest first."""
    turns: tuple[GoalTurn, ...]
    """Every typed user turn, in order."""
    tasks: tuple[TaskGoals, ...]
    findings: tuple[Finding, ...]
    """Goal findings, most severe first."""


def goal_view(store: ReadStore, conversation_id: str) -> GoalView:
    """The goal of a stored conversation, as goal tracking recorded it (reads only)."""
    transcript = store.transcript(conversation_id)
    versions = tuple(store.goal_versions(conversation_id))
    labels = {label.source_id: label for label in store.intent_labels(conversation_id)}
    set_by = {v.source_id: v.version for v in versions if v.source_id is not None}
    turns = tuple(
        GoalTurn(
            source_id=turn.source_id,
            text=_excerpt(turn.text),
            created_at=turn.created_at,
            label=labels.get(turn.source_id),
            set_version=set_by.get(turn.source_id),
        )
        for turn in user_turns(transcript.messages, transcript.summary.conversation.kind)
    )
    tasks = tuple(
        TaskGoals(task.task_id, task.title, tuple(store.goal_versions(task.task_id)))
        for task in transcript.tasks
    )
    findings: list[Finding] = []
    for rule in GOAL_RULES:
        page, _ = store.findings(
            conversation_ids=[conversation_id], rule=rule, limit=FINDINGS_LIMIT
        )
        findings += page
    findings.sort(key=lambda f: (_SEVERITY_RANK.get(f.severity, 9), f.title))
    return GoalView(
        conversation_id=conversation_id,
        current=versions[-1] if versions else None,
        versions=versions,
        turns=turns,
        tasks=tasks,
        findings=tuple(findings),
    )


_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2, "info": 3}


def _excerpt(text: str) -> str:
    return one_line(text, TURN_CHARS, trim=True)
