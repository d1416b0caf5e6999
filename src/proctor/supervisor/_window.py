"""The supervisor's input window (SPEC SUP-3): what one model call may see of one target.

Only visible events of the bound target: the last messages (12 by default) with the tool
calls they issued, within a character budget (24,000 by default) filled newest first —
older entries are dropped first, and a single entry too large for what is left is
clipped with a marker. For a task: its goal, its last key events (20 by default) and the
messages and calls within the task's time span. Around them, bounded: the current goal,
memories labelled as memory, and a summary of the conversation's still-open findings.

Never in a window: hidden reasoning (dropped at import, and no field that could carry it
— ``attributes`` — is rendered), secrets (redacted at import, and redacted again here),
other conversations (sub-agents included) and unbounded tool output.

Entries get short window ids (``m12`` a message, ``t13`` a tool call, ``e4`` a task event,
``target`` the whole target) numbered by position in the conversation, so the same event
keeps its id while the conversation grows; ``evidence_map`` turns an id the model cites
back into ``Evidence`` pointing at the stored source (SPEC SUP-7).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from proctor.findings import Finding
from proctor.rules import Trace, TraceContext
from proctor.store import MemoryRecord, StoredTranscript
from proctor.supervisor._assembly import WindowAssembly
from proctor.supervisor._window_types import MemoryNote, Window, WindowLimits
from proctor.transcript import Task, TaskEvent

DEFAULT_LIMITS = WindowLimits()


class MemorySource(Protocol):
    """Where the window's memories come from (the store)."""

    def conversation_memories(self, conversation_id: str, *, limit: int = 20) -> list[MemoryRecord]:
        """Confirmed memories of the conversation's project, newest first."""
        ...


def memory_notes(
    store: MemorySource, conversation_id: str, limits: WindowLimits = DEFAULT_LIMITS
) -> list[MemoryNote]:
    """The confirmed memories a window of this conversation may carry (SUP-3, SUP-10).

    Only memories a person confirmed, of the conversation's own project (a candidate, a
    discarded draft or another project's memory never), newest first, at most
    ``limits.memories``; ``build_window`` labels them as memory and keeps them within
    the character budget.
    """
    records = store.conversation_memories(conversation_id, limit=limits.memories)
    return [MemoryNote(memory_id=m.memory_id, text=m.text) for m in records]


def build_window(
    transcript: StoredTranscript,
    *,
    limits: WindowLimits = DEFAULT_LIMITS,
    open_findings: Sequence[Finding] = (),
    memories: Sequence[MemoryNote] = (),
    goal: str | None = None,
    task_id: str | None = None,
) -> Window:
    """The window of a conversation, or of one of its tasks when ``task_id`` is given."""
    conversation_id = transcript.summary.conversation_id
    trace = Trace.from_parts(
        TraceContext(conversation_id=conversation_id), transcript.messages, transcript.tool_calls
    )
    task = _task(transcript, task_id) if task_id is not None else None
    events = [e for e in trace.events if e.kind != "result" and _within(e.at, task)]
    if task is not None and goal is None:
        goal = task.goal or task.title
    assembly = WindowAssembly(limits, conversation_id, transcript.summary.conversation.title)
    assembly.add_goal(goal)
    assembly.add_memories(memories)
    if task is not None:
        assembly.add_task_events(_key_events(transcript, task), transcript.task_events)
    shown_findings = assembly.add_findings(
        [f for f in open_findings if f.conversation_id == conversation_id], events
    )
    total_messages = sum(1 for e in events if e.kind == "message")
    assembly.add_recent(events, total_messages)
    assembly.finish_findings(shown_findings)
    return assembly.window(
        target_id=task_id or conversation_id,
        target_type="task" if task is not None else "conversation",
        goal=goal,
        last_event_index=trace.events[-1].index if trace.events else -1,
        total_messages=total_messages,
        total_calls=len(events) - total_messages,
    )


def _task(transcript: StoredTranscript, task_id: str) -> Task:
    for task in transcript.tasks:
        if task.task_id == task_id:
            return task
    raise ValueError(
        f"task {task_id!r} is not in conversation {transcript.summary.conversation_id}"
    )


def _within(at: datetime | None, task: Task | None) -> bool:
    """Inside the task's time span (untimed events and tasks without a start count as inside)."""
    if task is None or task.created_at is None or at is None:
        return True
    return task.created_at <= at and (task.completed_at is None or at <= task.completed_at)


def _key_events(transcript: StoredTranscript, task: Task) -> list[TaskEvent]:
    """The task's own events, and run-level events inside its span when it has one."""
    return [
        e
        for e in transcript.task_events
        if e.task_id == task.task_id
        or (e.task_id is None and task.created_at is not None and _within(e.created_at, task))
    ]
