"""Keeping a conversation's goal current (SPEC GOAL-1, GOAL-2): classify, then derive.

``track_goals`` is what the supervision scheduler calls before it builds a window: it
labels the user turns not labelled yet (``_intent``), derives the goal versions those
labels create (``_goals``) and records them, and gives each task of the conversation its
goal (the task's subject and description) once. Re-running over the same messages
writes nothing.

``track_goals_lexically`` is the same round without a model, for callers with no event
loop (``proctor check``): with no caller nothing in it waits, so it runs to the end at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from proctor._util.clock import utcnow
from proctor.errors import ModelError
from proctor.model_types import ModelCaller
from proctor.store import GoalVersion, IntentLabel, StoredTranscript
from proctor.supervisor._goals import derive_versions, task_version, user_turns
from proctor.supervisor._intent import LOW_CONFIDENCE, GoalTrackingStore, classify_pending


@dataclass(frozen=True, slots=True)
class GoalUpdate:
    """What one round of goal tracking found and recorded."""

    conversation_id: str
    current: GoalVersion | None
    """The conversation's goal after this round."""
    recorded: tuple[GoalVersion, ...]
    """Versions written now: the conversation's, then its tasks' first versions."""
    labelled: tuple[IntentLabel, ...]
    """User turns classified now."""
    unlabelled: int
    """User turns still waiting for a label (a model error stopped classification)."""
    error: str | None = None
    """The model error that stopped classification, if one did."""


async def track_goals(
    store: GoalTrackingStore,
    conversation_id: str,
    *,
    caller: ModelCaller | None = None,
    run_id: str | None = None,
    threshold: float = LOW_CONFIDENCE,
    model_turns: int | None = None,
) -> GoalUpdate:
    """Classify new user turns, record the goal versions they create and the tasks' goals.

    ``model_turns`` bounds how many of the newest unlabelled turns go to the model (see
    ``classify_pending``).

    A model error does not fail tracking: the versions of the turns labelled so far are
    recorded and the error is returned, so the window can still carry the goal as known.
    """
    transcript = store.transcript(conversation_id)
    labelled: list[IntentLabel] = []
    error: str | None = None
    try:
        await classify_pending(
            caller,
            store,
            transcript,
            labelled,
            run_id=run_id,
            threshold=threshold,
            model_turns=model_turns,
        )
    except ModelError as exc:
        error = f"intent classification stopped: {exc}"
    turns = user_turns(transcript.messages, transcript.summary.conversation.kind)
    labels = {label.source_id: label for label in store.intent_labels(conversation_id)}
    stored = store.goal_versions(conversation_id)
    derived = derive_versions(conversation_id, turns, labels, stored, utcnow())
    recorded = store.record_goal_versions(conversation_id, derived)
    recorded += _record_task_goals(store, transcript)
    return GoalUpdate(
        conversation_id=conversation_id,
        current=store.current_goal(conversation_id),
        recorded=tuple(recorded),
        labelled=tuple(labelled),
        unlabelled=sum(1 for turn in turns if turn.source_id not in labels),
        error=error,
    )


def track_goals_lexically(
    store: GoalTrackingStore, conversation_id: str, *, threshold: float = LOW_CONFIDENCE
) -> GoalUpdate:
    """``track_goals`` with the lexical classifier only, run synchronously (no event loop).

    With no model caller, classification awaits nothing that can suspend, so the
    coroutine completes on its first step; one that suspended would be a bug, and is
    refused rather than left half-run.
    """
    coroutine = track_goals(store, conversation_id, caller=None, threshold=threshold)
    try:
        coroutine.send(None)
    except StopIteration as done:
        update: GoalUpdate = done.value
        return update
    coroutine.close()
    raise RuntimeError("lexical goal tracking waited for something; it must complete at once")


def _record_task_goals(store: GoalTrackingStore, transcript: StoredTranscript) -> list[GoalVersion]:
    created = {
        event.task_id: event.source_id
        for event in transcript.task_events
        if event.kind == "created" and event.task_id is not None
    }
    recorded: list[GoalVersion] = []
    for task in transcript.tasks:
        if store.current_goal(task.task_id) is not None:
            continue
        version = task_version(task, created.get(task.task_id), utcnow())
        recorded += store.record_goal_versions(task.task_id, [version])
    return recorded
