"""The values of the supervisor's input window: limits, entries, and the window itself.

See ``_window`` for how a window is cut from a transcript.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from proctor.findings import Evidence, Severity
from proctor.store import TargetType as TargetType

TARGET_ID = "target"
"""Window id of the whole target: evidence that something required never happened."""


@dataclass(frozen=True, slots=True)
class WindowLimits:
    """How much of a target one supervision call may see (SPEC SUP-3 defaults)."""

    messages: int = 12
    """Most recent messages shown (with the tool calls they issued)."""
    chars: int = 24_000
    """Characters of all data lines together, context included."""
    task_events: int = 20
    """Most recent key events of a task target."""
    findings: int = 10
    """Still-open findings summarised."""
    tool_output_chars: int = 1_500
    """One tool output, head and tail kept."""
    argument_chars: int = 400
    """One tool call's arguments."""
    message_chars: int = 8_000
    """One message's text, head and tail kept."""
    note_chars: int = 300
    """One task event's text, finding title or target title."""
    goal_chars: int = 2_000
    """The goal."""
    memories: int = 5
    """Memories shown."""
    memory_chars: int = 500
    """One memory's text."""

    def __post_init__(self) -> None:
        if self.chars < 4_000:
            raise ValueError(f"a window needs at least 4,000 characters, not {self.chars}")
        if self.goal_chars > self.chars // 4:
            raise ValueError("the goal may use at most a quarter of the window's characters")
        for name in ("messages", "tool_output_chars", "argument_chars", "message_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


@dataclass(frozen=True, slots=True)
class MemoryNote:
    """A confirmed memory in scope, shown to the supervisor labelled as memory."""

    memory_id: str
    text: str


@dataclass(frozen=True, slots=True)
class WindowItem:
    """One observed entry as sent: its window id, the stored source it is, its data line."""

    window_id: str
    source_type: Literal["message", "tool_call", "task_event"]
    source_id: str
    line: str


@dataclass(frozen=True, slots=True)
class OpenFindingNote:
    """A still-open finding as summarised in the window (never its full content)."""

    key: str
    rule: str
    severity: Severity
    title: str
    evidence: tuple[str, ...]
    """Window ids of its evidence that are in this window."""


@dataclass(frozen=True, slots=True)
class WindowDropped:
    """What the bounds left out."""

    messages: int = 0
    tool_calls: int = 0
    task_events: int = 0
    findings: int = 0
    memories: int = 0
    clipped_chars: int = 0
    """Characters cut from entries that were shown clipped."""
    clipped_outputs: int = 0
    """Tool outputs shown clipped."""


@dataclass(frozen=True, slots=True)
class Window:
    """Everything one supervision call sees of one target, bounded and addressable."""

    target_id: str
    target_type: TargetType
    conversation_id: str
    items: tuple[WindowItem, ...]
    """Observed entries in order: task key events first, then messages and tool calls."""
    goal: str | None
    open_findings: tuple[OpenFindingNote, ...]
    memories: tuple[MemoryNote, ...]
    lines: tuple[str, ...]
    """The data block's lines as sent (header, goal, memories, findings, entries)."""
    chars: int
    """Characters of ``lines`` (with their line breaks)."""
    evidence_map: Mapping[str, Evidence]
    """Window id → the stored source it stands for."""
    last_event_index: int
    """Trace index of the conversation's newest event (-1 when it has none)."""
    dropped: WindowDropped
    redactions: int
    """Secrets replaced while rendering (should be 0: import already redacts)."""
