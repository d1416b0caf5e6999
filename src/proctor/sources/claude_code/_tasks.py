"""Task-list tools (``TaskCreate``, ``TaskUpdate``, ``TodoWrite``) as tasks and task events.

These tools keep the agent's to-do list; they are not sub-agents even though 2.1.x
names them ``Task…``. Each created item becomes a ``Task`` and every status change a
``TaskEvent``, in thread order. Only calls that succeeded change the list.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from proctor.sources.claude_code._values import as_str
from proctor.transcript import Task, TaskEvent, ToolCall

TASK_LIST_TOOLS = frozenset({"TaskCreate", "TaskUpdate", "TodoWrite"})
_CREATED_ID = re.compile(r"Task #(\w+) created")


@dataclass(slots=True)
class _TaskState:
    task_id: str
    title: str
    goal: str | None
    status: str
    created_at: datetime | None
    completed_at: datetime | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


class _TaskBoard:
    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.tasks: dict[str, _TaskState] = {}
        self.events: list[TaskEvent] = []

    def create(
        self, call: ToolCall, index: int, local_id: str, title: str, goal: str | None, status: str
    ) -> None:
        task_id = f"cc:task:{self.scope}:{local_id}"
        if task_id in self.tasks:
            self.set_status(call, index, local_id, status)
            return
        self.tasks[task_id] = _TaskState(task_id, title, goal, status, call.created_at)
        if status == "completed":
            self.tasks[task_id].completed_at = call.completed_at or call.created_at
        self._event(call, index, "created", task_id, status, title)

    def set_status(self, call: ToolCall, index: int, local_id: str, status: str) -> None:
        task_id = f"cc:task:{self.scope}:{local_id}"
        state = self.tasks.get(task_id)
        if state is None:  # updated before we saw it created (created in another file)
            state = _TaskState(task_id, f"Task {local_id}", None, status, call.created_at)
            self.tasks[task_id] = state
        elif state.status == status:
            return
        state.status = status
        if status == "completed":
            state.completed_at = call.completed_at or call.created_at
        self._event(call, index, "status", task_id, status, f"{state.title}: {status}")

    def _event(
        self, call: ToolCall, index: int, kind: str, task_id: str, status: str, text: str
    ) -> None:
        self.events.append(
            TaskEvent(
                source_id=f"{call.source_id}:task:{index}",
                kind=kind,
                text=text,
                task_id=task_id,
                status=status,
                created_at=call.completed_at or call.created_at,
            )
        )


def task_list(calls: Iterable[ToolCall], scope: str) -> tuple[list[Task], list[TaskEvent]]:
    """Tasks and their events from the task-list tool calls among ``calls``."""
    board = _TaskBoard(scope)
    for call in calls:
        if call.name not in TASK_LIST_TOOLS or call.status != "ok":
            continue
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        if call.name == "TaskCreate":
            _task_create(board, call, arguments)
        elif call.name == "TaskUpdate":
            local_id = as_str(arguments.get("taskId"))
            status = as_str(arguments.get("status"))
            if local_id is not None and status is not None:
                board.set_status(call, 0, local_id, status)
            owner = as_str(arguments.get("owner"))
            state = board.tasks.get(f"cc:task:{scope}:{local_id}")
            if owner is not None and state is not None:
                state.attributes["owner"] = owner
        else:
            _todo_write(board, call, arguments)
    tasks = [
        Task(
            task_id=state.task_id,
            title=state.title,
            goal=state.goal,
            status=state.status,
            created_at=state.created_at,
            completed_at=state.completed_at,
            attributes=state.attributes,
        )
        for state in board.tasks.values()
    ]
    return tasks, board.events


def _task_create(board: _TaskBoard, call: ToolCall, arguments: dict[str, Any]) -> None:
    title = as_str(arguments.get("subject")) or as_str(arguments.get("description")) or "task"
    local_id = as_str(call.attributes.get("taskId"))
    if local_id is None and call.result_text:
        match = _CREATED_ID.search(call.result_text)
        local_id = match.group(1) if match else None
    if local_id is None:
        local_id = _content_key(title)
    board.create(call, 0, local_id, title, as_str(arguments.get("description")), "pending")


def _todo_write(board: _TaskBoard, call: ToolCall, arguments: dict[str, Any]) -> None:
    todos = arguments.get("todos")
    if not isinstance(todos, list):
        return
    for index, item in enumerate(todos):
        if not isinstance(item, dict):
            continue
        content = as_str(item.get("content"))
        if content is None:
            continue
        status = as_str(item.get("status")) or "pending"
        board.create(call, index, _content_key(content), content, None, status)


def _content_key(text: str) -> str:
    """A stable id for a to-do item that has none: a hash of its text."""
    return "todo-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
