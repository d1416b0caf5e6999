"""The parts a context draft can hold, ranked by relevance to the focus.

Every fact of a result's graph view becomes one *part*: a line Proctor writes (observed
text flattened onto it) and the sources it cites. Parts are atomic — trimming drops a
whole part, never a piece of one — and carry a rank: parts about the focus first, then
open items, changes, failed events, story lines, other events (newest first), entities,
relations, resolved items and lessons.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from proctor._util.text import one_line
from proctor.graph import SourceRef
from proctor.graph.views import GraphView

SOURCES_PER_PART = 2
"""Citations one part keeps (a file read a hundred times does not list a hundred)."""

SECTIONS = ("story lines", "open items", "events", "changes", "entities", "relations", "lessons")
"""Where parts appear in the draft, in this order."""

_ANGLE_RUN = re.compile(r"<{3,}|>{3,}")


def quote(text: str, limit: int = 400) -> str:
    """Observed text as data: one line, shortened, with no run that could look like a marker."""
    line = one_line(text, limit)
    return _ANGLE_RUN.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), line)


def stamp(value: datetime | None) -> str:
    """A UTC time as the draft writes it."""
    return "undated" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True, slots=True)
class Focus:
    """What the discussion continues about; at most one is set (none: the whole result)."""

    story_line_id: str | None = None
    entity_id: str | None = None
    open_item_key: str | None = None

    @property
    def label(self) -> str:
        """``story line b535fab0`` … or ``the whole result``."""
        if self.story_line_id:
            return f"story line {self.story_line_id[:12]}"
        if self.entity_id:
            return f"entity {self.entity_id[:12]}"
        if self.open_item_key:
            return f"open item {self.open_item_key[:60]}"
        return "the whole result"


@dataclass(frozen=True, slots=True)
class Part:
    """One line of the draft with the sources it cites."""

    section: str
    text: str
    rank: tuple[int, int, float, int]
    """(0 about the focus / 1 not, section priority, -time, position): lower is kept first."""
    position: int
    """Where it sits in its section (events oldest first)."""
    refs: tuple[SourceRef, ...] = ()
    more_sources: int = 0
    """Sources it cites beyond ``refs``."""


def _refs(sources: tuple[SourceRef, ...], count: int) -> tuple[tuple[SourceRef, ...], int]:
    """The first few distinct sources (one source may be cited in several fields)."""
    distinct: dict[tuple[str, str], SourceRef] = {}
    for ref in sources:
        distinct.setdefault((ref.source_type, ref.source_id), ref)
    kept = tuple(distinct.values())[:SOURCES_PER_PART]
    return kept, max(count - (len(sources) - len(distinct)), len(distinct)) - len(kept)


def _time(value: datetime | None) -> float:
    return -value.timestamp() if value is not None else 0.0


def related_ids(view: GraphView, focus: Focus) -> tuple[set[str], set[str]]:
    """(entity ids, event ids) the focus is about; empty sets when there is no focus."""
    entities: set[str] = set()
    if focus.entity_id:
        entities.add(focus.entity_id)
    if focus.open_item_key:
        for item in view.open_items:
            if item.key == focus.open_item_key:
                entities.update(item.entity_ids)
    events = {e.event_id for e in view.events if entities & set(e.entity_ids)}
    return entities, events


def graph_parts(view: GraphView, focus: Focus) -> list[Part]:
    """Every fact of the view as a ranked part."""
    names = {entity.entity_id: entity.name for entity in view.entities}
    focus_entities, focus_events = related_ids(view, focus)
    narrowed = bool(focus.entity_id or focus.open_item_key)

    def off_focus(entity_ids: Iterable[str], event_id: str | None = None) -> int:
        if not narrowed:
            return 0
        return 0 if (focus_entities & set(entity_ids) or event_id in focus_events) else 1

    parts: list[Part] = []
    for i, line in enumerate(view.story_lines):
        summary = f": {quote(line.summary, 300)}" if line.summary else ""
        parts.append(
            Part(
                "story lines",
                f"- {quote(line.title, 160)} ({line.event_count} events, "
                f"id {line.story_line_id[:12]}){summary}",
                (int(narrowed), 2, 0.0, i),
                i,
            )
        )
    for i, item in enumerate(view.open_items):
        refs, more = _refs(item.sources, item.source_count)
        is_focus = item.key == focus.open_item_key
        detail = f" — {quote(item.detail, 300)}" if item.detail else ""
        parts.append(
            Part(
                "open items",
                f"- [{quote(item.status, 20)}] {quote(item.title, 200)}{detail}",
                (
                    0 if is_focus else off_focus(item.entity_ids),
                    0 if item.status == "open" else 6,
                    0.0,
                    i,
                ),
                i,
                refs,
                more,
            )
        )
    for i, event in enumerate(view.events):
        refs, more = _refs(event.sources, event.source_count)
        involved = ", ".join(quote(names[e], 80) for e in event.entity_ids[:4] if e in names)
        parts.append(
            Part(
                "events",
                f"- {stamp(event.occurred_at)} · {quote(event.kind, 30)} · "
                f"{quote(event.title, 200)} ({quote(event.outcome, 20)})"
                + (f" — involves {involved}" if involved else ""),
                (
                    off_focus(event.entity_ids, event.event_id),
                    2 if event.outcome == "failed" else 3,
                    _time(event.occurred_at),
                    i,
                ),
                i,
                refs,
                more,
            )
        )
    for i, change in enumerate(view.changes):
        refs, more = _refs(change.sources, change.source_count)
        name = quote(names.get(change.entity_id, change.entity_id[:12]), 120)
        parts.append(
            Part(
                "changes",
                f"- {name} {quote(change.kind, 30)}: {quote(change.description, 300)}",
                (off_focus([change.entity_id]), 1, 0.0, i),
                i,
                refs,
                more,
            )
        )
    for i, entity in enumerate(view.entities):
        refs, more = _refs(entity.sources, entity.source_count)
        description = f" — {quote(entity.description, 240)}" if entity.description else ""
        parts.append(
            Part(
                "entities",
                f"- {quote(entity.kind, 30)} · {quote(entity.name, 160)}{description} "
                f"(id {entity.entity_id[:12]}, {quote(entity.state, 20)})",
                (off_focus([entity.entity_id]), 4, 0.0, i),
                i,
                refs,
                more,
            )
        )
    for i, relation in enumerate(view.relations):
        refs, more = _refs(relation.sources, relation.source_count)
        ends = [relation.from_entity_id, relation.to_entity_id]
        parts.append(
            Part(
                "relations",
                f"- {quote(names.get(ends[0], ends[0][:12]), 120)} —{quote(relation.type, 30)}→ "
                f"{quote(names.get(ends[1], ends[1][:12]), 120)}: {quote(relation.reason, 240)}",
                (off_focus(ends), 5, 0.0, i),
                i,
                refs,
                more,
            )
        )
    for i, experience in enumerate(view.experiences):
        parts.append(
            Part(
                "lessons",
                f"- {quote(experience.title, 160)}: {quote(experience.lesson, 300)}",
                (int(narrowed), 6, 0.0, i),
                i,
            )
        )
    return parts
