"""Codex turns as tasks, and the harness events of a session as task events.

A turn (``task_started`` … ``task_complete`` / ``turn_aborted``, keyed by ``turn_id``)
becomes a ``Task`` whose goal is the prompt that opened it; ``turn_context`` adds the
model and permissions in force, which policy findings need. Lifecycle, error, compaction,
review and guardian events become ``TaskEvent``s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from proctor.sources.codex._messages import IdRegistry
from proctor.sources.codex._records import (
    Where,
    as_dict,
    as_int,
    as_str,
    parse_time,
    small_attributes,
)
from proctor.transcript import Task, TaskEvent

LIFECYCLE_EVENTS = frozenset({"task_started", "task_complete", "turn_aborted"})
"""Events that open or close a turn; their ids come from the turn id."""

_SIMPLE_EVENTS = frozenset({"error", "stream_error", "warning", "context_compacted"})

_TITLE_CHARS = 80


@dataclass(slots=True)
class _TaskDraft:
    turn_id: str
    number: int
    status: str = "open"
    created_at: datetime | None = None
    completed_at: datetime | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class _EventDraft:
    kind: str
    text: str
    where: Where
    status: str | None
    attributes: dict[str, Any]


class TurnLog:
    """Collects the turns and harness events of one session."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._tasks: dict[str, _TaskDraft] = {}
        self._events: list[_EventDraft] = []
        self.aborted: set[str] = set()
        """Turns that ended in ``turn_aborted``: their unfinished calls were interrupted."""
        self.last_ending: tuple[str, str | None] | None = None
        """``(stop kind, final message)`` of the latest turn that ended."""

    def context(self, turn_id: str, payload: dict[str, Any]) -> None:
        """A ``turn_context``: the model and permissions in force for the turn."""
        task = self._task(turn_id)
        for name in ("model", "effort", "approval_policy", "personality"):
            value = as_str(payload.get(name))
            if value:
                task.attributes[name] = value
        sandbox = payload.get("sandbox_policy")
        if isinstance(sandbox, dict):
            kind = as_str(sandbox.get("type")) or as_str(sandbox.get("mode"))
            if kind:
                task.attributes["sandbox"] = kind
            if isinstance(sandbox.get("network_access"), bool):
                task.attributes["network_access"] = sandbox["network_access"]
        elif as_str(sandbox):
            task.attributes["sandbox"] = sandbox

    def started(self, turn_id: str | None, payload: dict[str, Any], where: Where) -> None:
        """``task_started``: the turn began."""
        if turn_id is not None:
            task = self._task(turn_id)
            task.status = "running"
            task.created_at = task.created_at or parse_time(payload.get("started_at")) or where.time
            window = as_int(payload.get("model_context_window"))
            if window:
                task.attributes["model_context_window"] = window
        self.event("task_started", "", where, status="running")

    def completed(self, turn_id: str | None, payload: dict[str, Any], where: Where) -> None:
        """``task_complete``: the turn ended; with ``error`` set, it failed."""
        error = as_dict(payload.get("error"))
        final = as_str(payload.get("last_agent_message"))
        status = "failed" if error else "completed"
        timings = {
            name: value
            for name in ("duration_ms", "time_to_first_token_ms")
            if (value := as_int(payload.get(name))) is not None
        }
        self._close(turn_id, status, where, timings)
        text = final or as_str(error.get("message")) or ""
        self.event("task_complete", text, where, status=status, attributes=timings)
        self.last_ending = ("error" if error else "completed", final)

    def aborted_turn(self, turn_id: str | None, payload: dict[str, Any], where: Where) -> None:
        """``turn_aborted``: the person interrupted the turn or it was replaced."""
        reason = as_str(payload.get("reason")) or "aborted"
        status = "interrupted" if reason == "interrupted" else "aborted"
        self._close(turn_id, status, where, {"abort_reason": reason})
        if turn_id is not None:
            self.aborted.add(turn_id)
        self.event("turn_aborted", reason, where, status=status)
        self.last_ending = ("interrupted", None)

    def event(
        self,
        kind: str,
        text: str,
        where: Where,
        *,
        status: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> None:
        """Record one task event in document order."""
        self._events.append(_EventDraft(kind, text, where, status, dict(attributes or {})))

    def harness_event(self, event_type: Any, payload: dict[str, Any], where: Where) -> None:
        """Errors, compaction notices, reviews, undo and guardian decisions; others are ignored."""
        if event_type in _SIMPLE_EVENTS:
            info = payload.get("codex_error_info")
            status = "error" if event_type == "error" else None
            self.event(
                event_type,
                as_str(payload.get("message")) or "",
                where,
                status=status,
                attributes=small_attributes(
                    {"error_kind": info if isinstance(info, str) else None}
                ),
            )
        elif event_type == "entered_review_mode":
            target = as_dict(payload.get("target"))
            text = as_str(payload.get("user_facing_hint")) or as_str(target.get("type")) or ""
            self.event("entered_review_mode", text, where)
        elif event_type == "exited_review_mode":
            review = as_dict(payload.get("review_output"))
            findings = review.get("findings")
            self.event(
                "exited_review_mode",
                as_str(review.get("overall_explanation")) or "",
                where,
                attributes=small_attributes(
                    {"findings": len(findings) if isinstance(findings, list) else None}
                ),
            )
        elif event_type == "undo_completed":
            success = payload.get("success")
            self.event(
                "undo_completed",
                as_str(payload.get("message")) or "",
                where,
                status=None if not isinstance(success, bool) else ("ok" if success else "failed"),
            )
        elif event_type == "guardian_assessment":
            action = as_dict(payload.get("action"))
            self.event(
                "guardian_assessment",
                as_str(payload.get("rationale")) or "",
                where,
                status=as_str(payload.get("status")),
                attributes=small_attributes(
                    {"risk_level": payload.get("risk_level"), "action": action.get("type")}
                ),
            )

    def build(
        self, ids: IdRegistry, goals: Mapping[str, str]
    ) -> tuple[list[Task], list[TaskEvent]]:
        """Tasks in the order turns began, and events in document order."""
        tasks = []
        for task in self._tasks.values():
            goal = goals.get(task.turn_id)
            tasks.append(
                Task(
                    task_id=f"codex:{self._session_id}:turn:{task.turn_id}",
                    title=_title(goal) or f"Turn {task.number}",
                    goal=goal,
                    status=task.status,
                    created_at=task.created_at,
                    completed_at=task.completed_at,
                    attributes=task.attributes,
                )
            )
        events = []
        positions: dict[tuple[str, str], int] = defaultdict(int)
        for draft in self._events:
            turn_id = draft.where.turn_id
            scope = turn_id or "session"
            index = positions[scope, draft.kind]
            positions[scope, draft.kind] = index + 1
            preferred = None
            if draft.kind in LIFECYCLE_EVENTS and turn_id is not None:
                preferred = f"codex:{self._session_id}:turn:{turn_id}:{draft.kind}"
            events.append(
                TaskEvent(
                    source_id=ids.claim(
                        preferred, f"codex:{self._session_id}:{scope}:{draft.kind}:{index}"
                    ),
                    kind=draft.kind,
                    text=draft.text,
                    task_id=None if turn_id is None else f"codex:{self._session_id}:turn:{turn_id}",
                    status=draft.status,
                    created_at=draft.where.time,
                    attributes=draft.attributes,
                )
            )
        return tasks, events

    def _task(self, turn_id: str) -> _TaskDraft:
        task = self._tasks.get(turn_id)
        if task is None:
            task = self._tasks[turn_id] = _TaskDraft(turn_id, len(self._tasks) + 1)
        return task

    def _close(
        self, turn_id: str | None, status: str, where: Where, attributes: dict[str, Any]
    ) -> None:
        if turn_id is None:
            return
        task = self._task(turn_id)
        task.status = status
        task.completed_at = where.time
        task.attributes.update(attributes)


def _title(goal: str | None) -> str | None:
    """The first line of the goal, shortened: Codex does not title its turns."""
    if not goal:
        return None
    line = goal.strip().splitlines()[0].strip() if goal.strip() else ""
    if len(line) > _TITLE_CHARS:
        line = line[: _TITLE_CHARS - 1].rstrip() + "…"
    return line or None
