"""One result's whole graph (REV-8, REV-12): exactly the objects it published, as they are now.

``load_result_graph`` reads the objects ``result_objects`` lists for the result with their
current state (a person's later edits show). Publish stores its answer as the result's
snapshot (``_graph_snapshot``); a bounded read of a large result is ``_graph_window``'s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Select, select
from sqlalchemy.engine import Connection

from proctor.graph import SourceRef
from proctor.graph.views import EventView, GraphView, ResultSummary
from proctor.store import _schema as t
from proctor.store._graph_rows import (
    change_view,
    chunks,
    entity_view,
    event_view,
    experience_view,
    open_item_view,
    ref_from_row,
    relation_view,
    story_line_view,
    view_select,
)

_RO = t.result_objects.c


def published(result_id: str, object_type: str) -> Select[Any]:
    """The ids of the objects of one type a result published (a ``result_objects`` range)."""
    return select(_RO.object_id).where(_RO.result_id == result_id, _RO.object_type == object_type)


class Written(NamedTuple):
    """What the publish that is writing a result knows of its events, entities and
    relations: the rows it inserted, as a read would return them (object type → id →
    the view's columns), and the ids of the result's other objects of those types (rows
    that existed before, read as usual). ``links``: the entity links of the events it
    inserted (all they have: the events are new), each event's in code point order —
    the order SQLite's ``ORDER BY`` gives them; None: read them (PostgreSQL orders text by
    the database's collation)."""

    rows: Mapping[str, Mapping[str, Mapping[str, Any]]]
    others: Mapping[str, Sequence[str]]
    links: Mapping[str, Sequence[str]] | None


_BY_ID = {
    "event": (t.graph_events, t.graph_events.c.event_id),
    "entity": (t.entities, t.entities.c.entity_id),
    "relation": (t.relations, t.relations.c.relation_id),
}


def _object_rows(c: Connection, rid: str, object_type: str, written: Written | None) -> list[Any]:
    """The view rows of a result's objects of one type (events, entities, relations):
    those ``written`` holds from it, the others read."""
    table, column = _BY_ID[object_type]
    if written is None:
        return list(
            c.execute(view_select(table).where(column.in_(published(rid, object_type)))).mappings()
        )
    rows: list[Any] = list(written.rows.get(object_type, {}).values())
    for part in chunks(sorted(written.others.get(object_type, ()))):
        rows.extend(c.execute(view_select(table).where(column.in_(part))).mappings())
    return rows


def event_order(event: EventView) -> tuple[bool, datetime | str, str]:
    return (event.occurred_at is None, event.occurred_at or "", event.event_id)


def load_result_graph(
    c: Connection,
    result: ResultSummary,
    written_refs: Iterable[tuple[str, str, SourceRef]] | None = None,
    written: Written | None = None,
) -> GraphView:
    """Everything a result published, with the objects' current state (no excerpts).

    ``written_refs`` are the result's source references in the order the publish that is
    writing it inserted them, (object type, object id, reference): a result's references
    are written once, by its own publish, so that publish passes them instead of reading
    them back (a third of the read on a large result). ``written`` likewise gives the
    rows of the events, entities and relations it inserted (see ``Written``).
    """
    rid = result.result_id
    refs: dict[tuple[str, str], list[SourceRef]] = defaultdict(list)
    if written_refs is not None:
        for object_type, object_id, ref in written_refs:
            refs[(object_type, object_id)].append(ref)
    else:
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
    if written is None or written.links is None:
        linked = ee.event_id.in_(published(rid, "event"))
        for event_id, entity_id in c.execute(
            select(ee.event_id, ee.entity_id).where(linked).order_by(ee.event_id, ee.entity_id)
        ):
            event_entities[event_id].append(entity_id)
    else:
        for event_id, entity_ids in written.links.items():
            event_entities[event_id] = list(entity_ids)
        for part in chunks(sorted(written.others.get("event", ()))):
            for event_id, entity_id in c.execute(
                select(ee.event_id, ee.entity_id)
                .where(ee.event_id.in_(part))
                .order_by(ee.event_id, ee.entity_id)
            ):
                event_entities[event_id].append(entity_id)
    sle = t.story_line_events.c
    line_events: dict[str, list[str]] = defaultdict(list)
    event_lines: dict[str, list[str]] = defaultdict(list)
    # The lines' events are kept to the result's own here, not in SQL: with both lists in
    # the WHERE clause SQLite probes the primary key once per (line, event) pair (1,024
    # lines × 20,032 events: 4.5 s of CPU for a large result).
    if written is None:
        own_events = set(c.execute(published(rid, "event")).scalars())
    else:
        own_events = {*written.rows.get("event", {}), *written.others.get("event", ())}
    for line_id, event_id in c.execute(
        select(sle.story_line_id, sle.event_id)
        .where(sle.story_line_id.in_(published(rid, "story_line")))
        .order_by(sle.story_line_id, sle.event_id)
    ):
        if event_id in own_events:
            line_events[line_id].append(event_id)
            event_lines[event_id].append(line_id)
    xe = t.experience_events.c
    experience_events: dict[str, list[str]] = defaultdict(list)
    for experience_id, event_id in c.execute(
        select(xe.experience_id, xe.event_id)
        .where(xe.experience_id.in_(published(rid, "experience")))
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
            for row in _object_rows(c, rid, "event", written)
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
            for row in _object_rows(c, rid, "entity", written)
        ),
        key=lambda e: (e.kind, e.name, e.entity_id),
    )
    relations = sorted(
        (
            relation_view(row, cited("relation", row["relation_id"]))
            for row in _object_rows(c, rid, "relation", written)
        ),
        key=lambda r: (r.from_entity_id, r.type, r.to_entity_id),
    )
    changes = sorted(
        (
            change_view(row, cited("entity_change", row["change_id"]))
            for row in c.execute(
                view_select(t.entity_changes).where(
                    t.entity_changes.c.change_id.in_(published(rid, "entity_change"))
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
                    t.open_items.c.item_key.in_(published(rid, "open_item"))
                )
            ).mappings()
        ),
        key=lambda o: (o.status != "open", o.key),
    )
    story_lines = []
    for row in c.execute(
        view_select(t.story_lines).where(
            t.story_lines.c.story_line_id.in_(published(rid, "story_line"))
        )
    ).mappings():
        ids = in_time_order(line_events.get(row["story_line_id"], ()))
        stamps = [at for at in (times.get(e) for e in ids) if at is not None]
        story_lines.append(
            story_line_view(row, ids, None, min(stamps, default=None), max(stamps, default=None))
        )
    story_lines.sort(key=lambda s: (s.first_at is None, s.first_at or "", s.story_line_id))
    experiences = sorted(
        (
            experience_view(row, in_time_order(experience_events.get(row["experience_id"], ())))
            for row in c.execute(
                view_select(t.experiences).where(
                    t.experiences.c.experience_id.in_(published(rid, "experience"))
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
