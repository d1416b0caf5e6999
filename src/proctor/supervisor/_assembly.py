"""Assembling a window's lines under one character budget.

Context (goal, memories, a task's key events, open findings) may take half the budget;
the observed messages and tool calls fill what is left, newest first, so the oldest are
dropped first and only the newest entry is ever shrunk to fit. Counts that appear in a
line (the header's, a finding's cited ids) are reserved at their largest first, so
rewriting them with the final numbers never makes a line longer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from proctor._util.text import one_line
from proctor.findings import SEVERITY_ORDER, Evidence, Finding
from proctor.rules import Event
from proctor.supervisor._block import encode_line
from proctor.supervisor._items import Renderer
from proctor.supervisor._window_types import (
    TARGET_ID,
    MemoryNote,
    OpenFindingNote,
    TargetType,
    Window,
    WindowDropped,
    WindowItem,
    WindowLimits,
)
from proctor.transcript import TaskEvent

_EXCERPT_CHARS = 200


def recent_events(events: Sequence[Event], messages: int) -> list[Event]:
    """Newest first: the last ``messages`` messages and the calls issued after the oldest."""
    chosen: list[Event] = []
    seen = 0
    for event in reversed(events):
        chosen.append(event)
        if event.kind == "message":
            seen += 1
            if seen == messages:
                break
    return chosen


def _excerpt(text: str) -> str | None:
    return one_line(text, _EXCERPT_CHARS) or None


class WindowAssembly:
    """Adds lines under one character budget, recording ids, evidence and what was dropped."""

    def __init__(self, limits: WindowLimits, conversation_id: str, title: str | None) -> None:
        self.limits = limits
        self.conversation_id = conversation_id
        self.render = Renderer()
        self.title = None if not title else self.render.text(title, limits.note_chars)[0]
        self.context: list[str] = []
        self.memories: list[MemoryNote] = []
        self.finding_lines: list[str] = []
        self.finding_titles: dict[str, str] = {}
        self.summaries: tuple[OpenFindingNote, ...] = ()
        self.key_events: list[WindowItem] = []
        self.entries: list[WindowItem] = []
        self.evidence: dict[str, Evidence] = {
            TARGET_ID: Evidence(source_type="conversation", source_id=conversation_id)
        }
        self.counts: dict[str, int] = {}
        self.header = self._header(shown=None, total=None)
        self.used = 0
        """Characters of every line but the header."""

    def _header(self, *, shown: int | None, total: int | None) -> str:
        entry: dict[str, Any] = {"type": "target", "id": TARGET_ID}
        if self.title:
            entry["title"] = self.title
        if total is not None:
            entry["messages_in_target"] = total
            entry["messages_shown"] = shown
        return encode_line(entry)

    def _left(self) -> int:
        return self.limits.chars - self.used - len(self.header) - 1

    def _context_fits(self, line: str) -> bool:
        # Context may take half the budget at most; the observed events get the rest.
        return self.used + len(self.header) + 1 + len(line) + 1 <= self.limits.chars // 2

    def _count(self, what: str, count: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + count

    # -- context: goal, memories, key events, open findings ---------------------------------

    def add_goal(self, goal: str | None) -> None:
        """The goal, clipped to its own limit (always shown)."""
        if goal is None:
            return
        text, omitted = self.render.text(goal, self.limits.goal_chars)
        self._count("clipped_chars", omitted)
        line = encode_line({"type": "goal", "text": text})
        self.context.append(line)
        self.used += len(line) + 1

    def add_memories(self, memories: Sequence[MemoryNote]) -> None:
        """Memories, labelled as memory, while the context budget allows."""
        for note in memories[: self.limits.memories]:
            text, omitted = self.render.text(note.text, self.limits.memory_chars)
            line = encode_line({"type": "memory", "memory_id": note.memory_id, "text": text})
            if not self._context_fits(line):
                break
            self._count("clipped_chars", omitted)
            self.context.append(line)
            self.memories.append(note)
            self.used += len(line) + 1
        self._count("memories", len(memories) - len(self.memories))

    def add_task_events(self, events: Sequence[TaskEvent], everything: Sequence[TaskEvent]) -> None:
        """A task's most recent key events, newest kept first when the budget is short."""
        ordinal = {e.source_id: n for n, e in enumerate(everything, start=1)}
        for event in reversed(events[-self.limits.task_events :]):
            window_id = f"e{ordinal[event.source_id]}"
            entry, omitted = self.render.task_event(window_id, event, self.limits.note_chars)
            item = WindowItem(window_id, "task_event", event.source_id, encode_line(entry))
            if not self._context_fits(item.line):
                break
            self._count("clipped_chars", omitted)
            self.key_events.insert(0, item)
            self.used += len(item.line) + 1
            self.evidence[window_id] = Evidence(
                source_type="task_event", source_id=event.source_id, excerpt=_excerpt(entry["text"])
            )
        self._count("task_events", len(events) - len(self.key_events))

    def add_findings(self, findings: Sequence[Finding], events: Sequence[Event]) -> list[Finding]:
        """Summarise open findings, citing every id they could have; trimmed once events are in."""
        candidates = self._ids(recent_events(events, self.limits.messages))
        still_open = [f for f in findings if f.status in ("open", "acknowledged")]
        ranked = sorted(still_open, key=lambda f: -SEVERITY_ORDER[f.severity])
        shown: list[Finding] = []
        for finding in ranked[: self.limits.findings]:
            line = self._finding_line(finding, candidates)
            if not self._context_fits(line):
                break
            self.finding_lines.append(line)
            self.used += len(line) + 1
            shown.append(finding)
        self._count("findings", len(still_open) - len(shown))
        return shown

    def _ids(self, events: Sequence[Event]) -> dict[tuple[str, str], str]:
        """(source type, source id) → window id, for the target, key events and ``events``."""
        ids: dict[tuple[str, str], str] = {("conversation", self.conversation_id): TARGET_ID}
        for item in (*self.key_events, *self.entries):
            ids[(item.source_type, item.source_id)] = item.window_id
        for event in events:
            ids[(event.source_type, event.source_id)] = _window_id(event)
        return ids

    def _finding_line(self, finding: Finding, ids: Mapping[tuple[str, str], str]) -> str:
        cited = [ids.get((e.source_type, e.source_id)) for e in finding.evidence]
        if finding.key not in self.finding_titles:
            self.finding_titles[finding.key] = self.render.text(
                finding.title, self.limits.note_chars
            )[0]
        entry = {
            "type": "open_finding",
            "rule": finding.rule,
            "severity": finding.severity,
            "action": finding.action,
            "title": self.finding_titles[finding.key],
            "evidence": list(dict.fromkeys(i for i in cited if i is not None)),
            "evidence_elsewhere": None in cited,
        }
        return encode_line(entry)

    def finish_findings(self, shown: Sequence[Finding]) -> None:
        """Re-render the summaries with the ids that made it in (never longer than before)."""
        ids = self._ids(())
        before = sum(len(line) + 1 for line in self.finding_lines)
        self.finding_lines = [self._finding_line(f, ids) for f in shown]
        self.used += sum(len(line) + 1 for line in self.finding_lines) - before
        self.summaries = tuple(
            OpenFindingNote(
                key=f.key,
                rule=f.rule,
                severity=f.severity,
                title=self.finding_titles[f.key],
                evidence=tuple(
                    dict.fromkeys(
                        ids[(e.source_type, e.source_id)]
                        for e in f.evidence
                        if (e.source_type, e.source_id) in ids
                    )
                ),
            )
            for f in shown
        )

    # -- observed events, newest first ------------------------------------------------------

    def add_recent(self, events: Sequence[Event], total_messages: int) -> None:
        """The most recent messages and calls while the budget allows, oldest dropped first."""
        chosen = recent_events(events, self.limits.messages)
        # Reserve the header's final size: the shown count can only be smaller.
        self.header = self._header(shown=total_messages, total=total_messages)
        for event in chosen:
            fitted = self._fit(event, first=not self.entries)
            if fitted is None:
                break
            item, evidence, omitted, clipped_output = fitted
            self._count("clipped_chars", omitted)
            self._count("clipped_outputs", int(clipped_output))
            self.entries.insert(0, item)
            self.used += len(item.line) + 1
            self.evidence[item.window_id] = evidence

    def _fit(self, event: Event, *, first: bool) -> tuple[WindowItem, Evidence, int, bool] | None:
        """The entry within what is left; only the newest entry is shrunk to fit."""
        left = self._left()
        limit = self.limits.message_chars if event.message is not None else None
        while True:
            fitted = self._item(event, limit)
            overflow = len(fitted[0].line) + 1 - left
            if overflow <= 0:
                return fitted
            if not first or limit == 0:
                return None
            current = limit if limit is not None else self.limits.tool_output_chars
            limit = max(current - overflow - 16, 0)

    def _item(self, event: Event, limit: int | None) -> tuple[WindowItem, Evidence, int, bool]:
        window_id = _window_id(event)
        if event.message is not None:
            message = event.message
            entry, omitted = self.render.message(window_id, message, limit or 0)
            item = WindowItem(window_id, "message", message.source_id, encode_line(entry))
            evidence = Evidence(
                source_type="message", source_id=message.source_id, excerpt=_excerpt(entry["text"])
            )
            return item, evidence, omitted, False
        assert event.call is not None
        call = event.call
        output_chars = self.limits.tool_output_chars if limit is None else limit
        entry, omitted = self.render.tool_call(
            window_id,
            call,
            argument_chars=min(self.limits.argument_chars, max(output_chars, 40)),
            output_chars=output_chars,
        )
        item = WindowItem(window_id, "tool_call", call.source_id, encode_line(entry))
        evidence = Evidence(
            source_type="tool_call",
            source_id=call.source_id,
            excerpt=_excerpt(f"{call.name} {entry['arguments']}"),
        )
        return item, evidence, omitted, "output_chars" in entry

    # -- the result -------------------------------------------------------------------------

    def window(
        self,
        *,
        target_id: str,
        target_type: TargetType,
        goal: str | None,
        last_event_index: int,
        total_messages: int,
        total_calls: int,
    ) -> Window:
        """The finished window."""
        shown_messages = sum(1 for i in self.entries if i.source_type == "message")
        shown_calls = len(self.entries) - shown_messages
        self.header = self._header(shown=shown_messages, total=total_messages)
        items = (*self.key_events, *self.entries)
        lines = (self.header, *self.context, *self.finding_lines, *(i.line for i in items))
        dropped = WindowDropped(
            messages=total_messages - shown_messages,
            tool_calls=total_calls - shown_calls,
            task_events=self.counts.get("task_events", 0),
            findings=self.counts.get("findings", 0),
            memories=self.counts.get("memories", 0),
            clipped_chars=self.counts.get("clipped_chars", 0),
            clipped_outputs=self.counts.get("clipped_outputs", 0),
        )
        return Window(
            target_id=target_id,
            target_type=target_type,
            conversation_id=self.conversation_id,
            items=items,
            goal=goal,
            open_findings=self.summaries,
            memories=tuple(self.memories),
            lines=lines,
            chars=sum(len(line) + 1 for line in lines),
            evidence_map=MappingProxyType(dict(self.evidence)),
            last_event_index=last_event_index,
            dropped=dropped,
            redactions=self.render.redactor.total,
        )


def _window_id(event: Event) -> str:
    return f"{'m' if event.kind == 'message' else 't'}{event.index}"
