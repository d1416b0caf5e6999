"""A result's snapshot (REV-8): its graph as it said it when published, read back bounded.

Publish stores the whole graph in ``results.snapshot`` (events in the view's order, each
story line with all its events). ``graph_from_snapshot`` narrows it to a story line and a
window of events by the rules ``GraphView`` states, on the stored JSON, and turns only
what it keeps into views; ``_graph_window`` applies the same rules in SQL to the current
graph.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from pydantic import TypeAdapter
from sqlalchemy import select
from sqlalchemy.engine import Connection

from proctor.graph.views import (
    SOURCES_PER_OBJECT,
    EntityChangeView,
    EntityView,
    EventView,
    ExperienceView,
    GraphTotals,
    GraphView,
    OpenItemView,
    RelationView,
    ResultSummary,
    StoryLineView,
)
from proctor.store import _schema as t
from proctor.store._graph_window import match_story_line, subtree

SNAPSHOT_VERSION = 1


class _Adapters(NamedTuple):
    entities: TypeAdapter[tuple[EntityView, ...]]
    events: TypeAdapter[tuple[EventView, ...]]
    relations: TypeAdapter[tuple[RelationView, ...]]
    changes: TypeAdapter[tuple[EntityChangeView, ...]]
    open_items: TypeAdapter[tuple[OpenItemView, ...]]
    story_lines: TypeAdapter[tuple[StoryLineView, ...]]
    experiences: TypeAdapter[tuple[ExperienceView, ...]]


@cache
def _adapters() -> _Adapters:
    """The views' pydantic adapters, built on first use: a command that never publishes or
    reads a snapshot (a review that finds nothing new) does not pay for building them."""
    return _Adapters(
        TypeAdapter(tuple[EntityView, ...]),
        TypeAdapter(tuple[EventView, ...]),
        TypeAdapter(tuple[RelationView, ...]),
        TypeAdapter(tuple[EntityChangeView, ...]),
        TypeAdapter(tuple[OpenItemView, ...]),
        TypeAdapter(tuple[StoryLineView, ...]),
        TypeAdapter(tuple[ExperienceView, ...]),
    )


_Part = list[dict[str, Any]]


def snapshot_json(view: GraphView, counts: dict[str, int]) -> dict[str, Any]:
    """A result's whole graph as stored in ``results.snapshot``, with the publish counts."""
    a = _adapters()
    return {
        "version": SNAPSHOT_VERSION,
        "counts": counts,
        "events": a.events.dump_python(view.events, mode="json"),
        "entities": a.entities.dump_python(view.entities, mode="json"),
        "relations": a.relations.dump_python(view.relations, mode="json"),
        "changes": a.changes.dump_python(view.changes, mode="json"),
        "open_items": a.open_items.dump_python(view.open_items, mode="json"),
        "story_lines": a.story_lines.dump_python(view.story_lines, mode="json"),
        "experiences": a.experiences.dump_python(view.experiences, mode="json"),
    }


def result_snapshot(c: Connection, result_id: str) -> dict[str, Any]:
    """The stored snapshot of a result."""
    snapshot = c.execute(
        select(t.results.c.snapshot).where(t.results.c.result_id == result_id)
    ).scalar_one()
    return dict(snapshot or {})


def _capped(items: _Part) -> _Part:
    """At most ``SOURCES_PER_OBJECT`` references per object, and how many there are."""
    return [
        {
            **item,
            "sources": item["sources"][:SOURCES_PER_OBJECT],
            "source_count": item.get("source_count", len(item["sources"])),
        }
        for item in items
    ]


def _involving(parts: dict[str, _Part], events: _Part) -> dict[str, _Part]:
    """What ``events`` involve: entities linked to them (of those published), relations
    between such entities, their changes and open items, experiences holding an event."""
    linked = {entity_id for event in events for entity_id in event["entity_ids"]}
    ids = {event["event_id"] for event in events}
    return {
        "entities": [e for e in parts["entities"] if e["entity_id"] in linked],
        "relations": [
            r
            for r in parts["relations"]
            if r["from_entity_id"] in linked and r["to_entity_id"] in linked
        ],
        "changes": [ch for ch in parts["changes"] if ch["entity_id"] in linked],
        "open_items": [o for o in parts["open_items"] if linked.intersection(o["entity_ids"])],
        "experiences": [x for x in parts["experiences"] if ids.intersection(x["event_ids"])],
    }


def _totals(parts: dict[str, _Part], events: _Part, lines: _Part) -> GraphTotals:
    return GraphTotals(
        events=len(events),
        entities=len(parts["entities"]),
        relations=len(parts["relations"]),
        changes=len(parts["changes"]),
        open_items=len(parts["open_items"]),
        story_lines=len(lines),
        experiences=len(parts["experiences"]),
    )


def graph_from_snapshot(
    result: ResultSummary,
    snapshot: dict[str, Any],
    story_line_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> GraphView:
    """The graph as the result stated it when published, narrowed and bounded like a
    current read (``GraphView``)."""
    parts: dict[str, _Part] = {
        name: list(snapshot.get(name, []))
        for name in ("events", "entities", "relations", "changes", "open_items", "experiences")
    }
    # Snapshots hold every event of a line; older ones have no count of them.
    lines = [
        {"event_count": len(line["event_ids"]), **line} for line in snapshot.get("story_lines", [])
    ]
    events = parts["events"]
    if story_line_id is not None:
        parents = {line["story_line_id"]: line["parent_id"] for line in lines}
        story_line_id = match_story_line(result.result_id, story_line_id, sorted(parents))
        in_view = set(subtree(story_line_id, parents))
        lines = [line for line in lines if line["story_line_id"] in in_view]
        members = {event_id for line in lines for event_id in line["event_ids"]}
        events = [event for event in events if event["event_id"] in members]
    end = max(len(events) - offset, 0)
    shown = events[0 if limit is None else max(end - limit, 0) : end]
    if len(shown) == len(events):
        kept = parts if story_line_id is None else _involving(parts, events)
        totals = _totals(kept, events, lines)
    else:
        totals = _totals(
            parts if story_line_id is None else _involving(parts, events), events, lines
        )
        kept = _involving(parts, shown)
        shown_ids = {event["event_id"] for event in shown}
        lines = [
            {**line, "event_ids": [e for e in line["event_ids"] if e in shown_ids]}
            for line in lines
            if shown_ids.intersection(line["event_ids"])
        ]
    a = _adapters()
    return GraphView(
        result=result,
        story_line_id=story_line_id,
        as_published=True,
        events=a.events.validate_python(_capped(shown)),
        entities=a.entities.validate_python(_capped(kept["entities"])),
        relations=a.relations.validate_python(_capped(kept["relations"])),
        changes=a.changes.validate_python(_capped(kept["changes"])),
        open_items=a.open_items.validate_python(_capped(kept["open_items"])),
        story_lines=a.story_lines.validate_python(lines),
        experiences=a.experiences.validate_python(kept["experiences"]),
        totals=totals,
        limit=limit,
        offset=offset,
    )
