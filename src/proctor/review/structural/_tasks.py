"""Facts of task events: a task entity per task id and a ``task_status`` event per change.

Adapters already turn task lists (Claude Code's ``TodoWrite``/``TaskCreate``/
``TaskUpdate``, Codex turns, OpenTelemetry agent spans) into task events with a status;
this reads them as they are. An ``error`` task event (a failed span, a Codex turn error)
becomes an ``error`` event about its task.
"""

from __future__ import annotations

from proctor.review._batch import BatchSource
from proctor.review.structural._builder import FactBuilder, Outcome
from proctor.review.structural._titles import short
from proctor.transcript import TaskEvent

_IGNORED_KINDS = frozenset({"undo_completed", "guardian_assessment"})
"""Events that carry a status of something other than their task."""
_DONE = frozenset({"completed", "complete", "done", "succeeded", "success"})
_FAILED = frozenset({"failed", "error", "interrupted", "aborted", "cancelled", "canceled"})
_TURN_KINDS = frozenset({"task_started", "task_complete", "turn_aborted"})


def task_facts(builder: FactBuilder, source: BatchSource, event: TaskEvent) -> None:
    """Record a task status change (or a task error) that a task event shows."""
    if event.kind in _IGNORED_KINDS:
        return
    status = (event.status or "").strip()
    if event.kind == "error":
        _task_error(builder, source, event)
        return
    if not event.task_id or not status:
        return
    name = _task_name(event, status)
    refs = [source.cite("text")] if event.text else [source.cite()]
    task_id = builder.entity(
        source,
        "task",
        event.task_id,
        name=name,
        description=f"Task {name}",
        refs=refs,
    )
    outcome: Outcome = (
        "ok" if status.lower() in _DONE else "failed" if status.lower() in _FAILED else "unknown"
    )
    builder.event(
        source,
        "task_status",
        title=f"{name}: {status}",
        summary=f"Task {name!r} is {status} ({event.kind.replace('_', ' ')}).",
        refs=refs,
        entity_ids=[task_id],
        outcome=outcome,
        occurred_at=event.created_at or source.occurred_at,
    )


def _task_name(event: TaskEvent, status: str) -> str:
    """The task's title as its events show it (``Add tests: in_progress`` → ``Add tests``)."""
    text = event.text.strip()
    if event.kind in ("created", "status") and text:
        return short(text.removesuffix(f": {status}"), 80)
    if event.kind in _TURN_KINDS or ":turn:" in (event.task_id or ""):
        return f"Turn {(event.task_id or '').rsplit(':', 1)[-1][:13]}"
    return f"Task {(event.task_id or '').rsplit(':', 1)[-1][:24]}"


def _task_error(builder: FactBuilder, source: BatchSource, event: TaskEvent) -> None:
    entity_ids = []
    if event.task_id:
        entity_ids.append(
            builder.entity(
                source,
                "task",
                event.task_id,
                name=_task_name(event, ""),
                description=f"Task {_task_name(event, '')}",
                refs=[source.cite()],
            )
        )
    text = short(event.text, 120) if event.text.strip() else "an error"
    builder.event(
        source,
        "error",
        title=f"Error: {text}",
        summary=f"The run reported {text}.",
        refs=[source.cite("text", 0, len(event.text))] if event.text else [source.cite()],
        entity_ids=entity_ids,
        outcome="failed",
        occurred_at=event.created_at or source.occurred_at,
    )
