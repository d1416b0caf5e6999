"""One result's graph (REV-8, REV-12): exactly the objects it published, now or as it said then.

``load_result_graph`` reads the objects ``result_objects`` lists for the result with their
current state (a person's later edits show); ``graph_from_snapshot`` reads the snapshot
the publish stored, so history reads what the result said when it was published.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import select
from sqlalchemy.engine import Connection

from proctor.errors import ConfigError, NotFoundError
from proctor.graph import SourceRef
from proctor.graph.views import (
    EntityChangeView,
    EntityView,
    EventView,
    ExperienceView,
    GraphView,
    OpenItemView,
    RelationView,
    ResultSummary,
    StoryLineView,
)
from proctor.store import _schema as t
from proctor.store._graph_rows import (
    change_view,
    entity_view,
    event_view,
    experience_view,
    open_item_view,
    ref_from_row,
    relation_view,
    story_line_view,
    view_select,
)

SNAPSHOT_VERSION = 1

_R = t.results.c
_RO = t.result_objects.c


def _published(result_id: str, object_type: str) -> Any:
    return select(_RO.object_id).where(_RO.result_id == result_id, _RO.object_type == object_type)


def event_order(event: EventView) -> tuple[bool, datetime | str, str]:
    return (event.occurred_at is None, event.occurred_at or "", event.event_id)


def load_result_graph(c: Connection, result: ResultSummary) -> GraphView:
    """Everything a result published, with the objects' current state (no excerpts)."""
    rid = result.result_id
    refs: dict[tuple[str, str], list[SourceRef]] = defaultdict(list)
    sr = t.source_refs.c
    # Through result_objects: source_refs is indexed by object, not by result.
    for row in c.execute(
        select(t.source_refs)
        .join(
            t.result_objects,
            (_RO.object_type == sr.object_type) & (_RO.object_id == sr.object_id),
        )
        .where(_RO.result_id == rid, sr.result_id == rid)
        .order_by(sr.ref_id)
    ).mappings():
        refs[(row["object_type"], row["object_id"])].append(ref_from_row(row))

    def cited(object_type: str, object_id: str) -> tuple[SourceRef, ...]:
        return tuple(refs.get((object_type, object_id), ()))

    ee = t.event_entities.c
    event_entities: dict[str, list[str]] = defaultdict(list)
    for event_id, entity_id in c.execute(
        select(ee.event_id, ee.entity_id)
        .where(ee.event_id.in_(_published(rid, "event")))
        .order_by(ee.event_id, ee.entity_id)
    ):
        event_entities[event_id].append(entity_id)
    sle = t.story_line_events.c
    line_events: dict[str, list[str]] = defaultdict(list)
    event_lines: dict[str, list[str]] = defaultdict(list)
    for line_id, event_id in c.execute(
        select(sle.story_line_id, sle.event_id)
        .where(
            sle.story_line_id.in_(_published(rid, "story_line")),
            sle.event_id.in_(_published(rid, "event")),
        )
        .order_by(sle.story_line_id, sle.event_id)
    ):
        line_events[line_id].append(event_id)
        event_lines[event_id].append(line_id)
    xe = t.experience_events.c
    experience_events: dict[str, list[str]] = defaultdict(list)
    for experience_id, event_id in c.execute(
        select(xe.experience_id, xe.event_id)
        .where(xe.experience_id.in_(_published(rid, "experience")))
        .order_by(xe.experience_id, xe.event_id)
    ):
        experience_events[experience_id].append(event_id)

    events = sorted(
        (
            event_view(
                row,
                tuple(event_entities.get(row["event_id"], ())),
                tuple(event_lines.get(row["event_id"], ())),
                cited("event", row["event_id"]),
            )
            for row in c.execute(
                view_select(t.graph_events).where(
                    t.graph_events.c.event_id.in_(_published(rid, "event"))
                )
            ).mappings()
        ),
        key=event_order,
    )
    order = {event.event_id: index for index, event in enumerate(events)}
    times = {event.event_id: event.occurred_at for event in events}

    def in_time_order(event_ids: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(event_ids, key=lambda e: order.get(e, len(order))))

    entities = sorted(
        (
            entity_view(row, cited("entity", row["entity_id"]))
            for row in c.execute(
                view_select(t.entities).where(t.entities.c.entity_id.in_(_published(rid, "entity")))
            ).mappings()
        ),
        key=lambda e: (e.kind, e.name, e.entity_id),
    )
    relations = sorted(
        (
            relation_view(row, cited("relation", row["relation_id"]))
            for row in c.execute(
                view_select(t.relations).where(
                    t.relations.c.relation_id.in_(_published(rid, "relation"))
                )
            ).mappings()
        ),
        key=lambda r: (r.from_entity_id, r.type, r.to_entity_id),
    )
    changes = sorted(
        (
            change_view(row, cited("entity_change", row["change_id"]))
            for row in c.execute(
                view_select(t.entity_changes).where(
                    t.entity_changes.c.change_id.in_(_published(rid, "entity_change"))
                )
            ).mappings()
        ),
        key=lambda ch: (ch.entity_id, ch.change_id),
    )
    open_items = sorted(
        (
            open_item_view(row, cited("open_item", row["item_key"]))
            for row in c.execute(
                view_select(t.open_items).where(
                    t.open_items.c.item_key.in_(_published(rid, "open_item"))
                )
            ).mappings()
        ),
        key=lambda o: (o.status != "open", o.key),
    )
    story_lines = []
    for row in c.execute(
        view_select(t.story_lines).where(
            t.story_lines.c.story_line_id.in_(_published(rid, "story_line"))
        )
    ).mappings():
        ids = in_time_order(line_events.get(row["story_line_id"], ()))
        stamps = [times[e] for e in ids if times.get(e) is not None]
        story_lines.append(
            dataclasses.replace(
                story_line_view(row, ids),
                first_at=min(stamps, default=None),  # type: ignore[type-var]
                last_at=max(stamps, default=None),  # type: ignore[type-var]
            )
        )
    story_lines.sort(key=lambda s: (s.first_at is None, s.first_at or "", s.story_line_id))
    experiences = sorted(
        (
            experience_view(row, in_time_order(experience_events.get(row["experience_id"], ())))
            for row in c.execute(
                view_select(t.experiences).where(
                    t.experiences.c.experience_id.in_(_published(rid, "experience"))
                )
            ).mappings()
        ),
        key=lambda x: (x.title, x.experience_id),
    )
    return GraphView(
        result=result,
        story_line_id=None,
        as_published=False,
        events=tuple(events),
        entities=tuple(entities),
        relations=tuple(relations),
        changes=tuple(changes),
        open_items=tuple(open_items),
        story_lines=tuple(story_lines),
        experiences=tuple(experiences),
    )


def narrow_to_story_line(view: GraphView, story_line_id: str) -> GraphView:
    """The part of a result's graph in one story line and its sub-threads."""
    known = {line.story_line_id for line in view.story_lines}
    if story_line_id not in known:
        matches = [line_id for line_id in known if line_id.startswith(story_line_id)]
        if not matches:
            raise NotFoundError(
                f"result {view.result.result_id[:12]} has no story line {story_line_id!r}"
            )
        if len(matches) > 1:
            raise ConfigError(f"{story_line_id!r} matches several story lines; give more of it")
        story_line_id = matches[0]
    lines = {story_line_id}
    grew = True
    while grew:
        children = {
            line.story_line_id
            for line in view.story_lines
            if line.parent_id in lines and line.story_line_id not in lines
        }
        grew = bool(children)
        lines |= children
    event_ids = {
        e for line in view.story_lines if line.story_line_id in lines for e in line.event_ids
    }
    events = tuple(e for e in view.events if e.event_id in event_ids)
    entity_ids = {entity_id for event in events for entity_id in event.entity_ids}
    return dataclasses.replace(
        view,
        story_line_id=story_line_id,
        events=events,
        entities=tuple(e for e in view.entities if e.entity_id in entity_ids),
        relations=tuple(
            r
            for r in view.relations
            if r.from_entity_id in entity_ids and r.to_entity_id in entity_ids
        ),
        changes=tuple(ch for ch in view.changes if ch.entity_id in entity_ids),
        open_items=tuple(o for o in view.open_items if entity_ids.intersection(o.entity_ids)),
        story_lines=tuple(line for line in view.story_lines if line.story_line_id in lines),
        experiences=tuple(x for x in view.experiences if event_ids.intersection(x.event_ids)),
    )


_ENTITIES: TypeAdapter[tuple[EntityView, ...]] = TypeAdapter(tuple[EntityView, ...])
_EVENTS: TypeAdapter[tuple[EventView, ...]] = TypeAdapter(tuple[EventView, ...])
_RELATIONS: TypeAdapter[tuple[RelationView, ...]] = TypeAdapter(tuple[RelationView, ...])
_CHANGES: TypeAdapter[tuple[EntityChangeView, ...]] = TypeAdapter(tuple[EntityChangeView, ...])
_OPEN_ITEMS: TypeAdapter[tuple[OpenItemView, ...]] = TypeAdapter(tuple[OpenItemView, ...])
_LINES: TypeAdapter[tuple[StoryLineView, ...]] = TypeAdapter(tuple[StoryLineView, ...])
_EXPERIENCES: TypeAdapter[tuple[ExperienceView, ...]] = TypeAdapter(tuple[ExperienceView, ...])


def snapshot_json(view: GraphView, counts: dict[str, int]) -> dict[str, Any]:
    """A result's graph as stored in ``results.snapshot`` (REV-8), with the publish counts."""
    return {
        "version": SNAPSHOT_VERSION,
        "counts": counts,
        "events": _EVENTS.dump_python(view.events, mode="json"),
        "entities": _ENTITIES.dump_python(view.entities, mode="json"),
        "relations": _RELATIONS.dump_python(view.relations, mode="json"),
        "changes": _CHANGES.dump_python(view.changes, mode="json"),
        "open_items": _OPEN_ITEMS.dump_python(view.open_items, mode="json"),
        "story_lines": _LINES.dump_python(view.story_lines, mode="json"),
        "experiences": _EXPERIENCES.dump_python(view.experiences, mode="json"),
    }


def graph_from_snapshot(result: ResultSummary, snapshot: dict[str, Any]) -> GraphView:
    """The graph exactly as the result stated it when it was published."""
    return GraphView(
        result=result,
        story_line_id=None,
        as_published=True,
        events=_EVENTS.validate_python(snapshot.get("events", [])),
        entities=_ENTITIES.validate_python(snapshot.get("entities", [])),
        relations=_RELATIONS.validate_python(snapshot.get("relations", [])),
        changes=_CHANGES.validate_python(snapshot.get("changes", [])),
        open_items=_OPEN_ITEMS.validate_python(snapshot.get("open_items", [])),
        story_lines=_LINES.validate_python(snapshot.get("story_lines", [])),
        experiences=_EXPERIENCES.validate_python(snapshot.get("experiences", [])),
    )


def result_snapshot(c: Connection, result_id: str) -> dict[str, Any]:
    """The stored snapshot of a result."""
    snapshot = c.execute(select(_R.snapshot).where(_R.result_id == result_id)).scalar_one()
    return dict(snapshot or {})
