"""Reading the objects a bounded graph view shows, by id (REV-12).

``_graph_window`` decides which events, entities, relations, changes, open items, story
lines and experiences a view holds; ``assemble`` reads them by id, one statement per kind
(the ids bound as one list: ``among``), each object with the first ``SOURCES_PER_OBJECT``
references its result recorded and their count.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Select, bindparam, exists, func, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from proctor.graph import SourceRef
from proctor.graph.views import (
    SOURCES_PER_OBJECT,
    EntityChangeView,
    EntityView,
    EventView,
    GraphTotals,
    GraphView,
    OpenItemView,
    RelationView,
    ResultSummary,
    StoryLineView,
)
from proctor.store import _schema as t
from proctor.store._graph_result import event_order
from proctor.store._graph_rows import (
    among,
    bound_ids,
    change_view,
    entity_view,
    event_view,
    experience_view,
    fetch,
    open_item_view,
    relation_view,
    story_line_view,
    view_columns,
    view_select,
)

_RO = t.result_objects.c
_GE = t.graph_events.c
_SLE = t.story_line_events.c

_NO_CUTOFF = 2**62
"""A ref id above every real one: an object with few references keeps them all."""


def is_published(rid: Any, object_type: str, column: Any) -> ColumnElement[bool]:
    """``column`` names an object of ``object_type`` the result published: one primary-key
    lookup per row (``IN (published …)`` would first list every id the result published)."""
    return exists().where(
        _RO.result_id == rid, _RO.object_type == object_type, _RO.object_id == column
    )


@dataclass
class Involved:
    """What a set of events involves (see ``GraphView``): the ids of each kind."""

    entity_ids: set[str]
    """Every entity linked to one of the events, published by the result or not."""
    entities: set[str]
    relations: set[str]
    changes: set[str]
    open_items: set[str]
    experiences: set[str]


def cited_refs(
    c: Connection, rid: str, object_type: str, ids: Sequence[str]
) -> dict[str, tuple[tuple[SourceRef, ...], int]]:
    """The first ``SOURCES_PER_OBJECT`` references the result recorded for each object, in
    the order written, and how many it recorded."""
    if not ids:
        return {}

    def build() -> Select[Any]:
        sr = t.source_refs.c
        result_id: BindParameter[str] = bindparam("rid", rid)
        # Per object: how many references, and the id of the last one kept (the N-th), read
        # from the (object, result) index; then the kept ones are a range of that index each.
        # (Numbering every reference with a window function sorts them all: a file read in
        # thousands of tool calls has thousands.)
        later = t.source_refs.alias("later")
        nth = (
            select(later.c.ref_id)
            .where(
                later.c.object_type == object_type,
                later.c.object_id == sr.object_id,
                later.c.result_id == result_id,
            )
            .order_by(later.c.ref_id)
            .limit(1)
            .offset(SOURCES_PER_OBJECT - 1)
            .scalar_subquery()
        )
        objects = (
            select(
                sr.object_id.label("object_id"),
                func.count().label("total"),
                func.coalesce(nth, _NO_CUTOFF).label("last_ref_id"),
            )
            .where(
                sr.object_type == object_type,
                among(c, sr.object_id, ids, name="ids"),
                sr.result_id == result_id,
            )
            .group_by(sr.object_id)
            .subquery()
        )
        # The kept references themselves, in the same statement (not their ids, then the
        # rows by id in a second round of statements).
        return (
            select(
                sr.ref_id,
                sr.object_id,
                sr.source_type,
                sr.source_id,
                sr.field,
                sr.start_offset,
                sr.end_offset,
                objects.c.total,
            )
            .join(objects, sr.object_id == objects.c.object_id)
            .where(
                sr.object_type == object_type,
                sr.result_id == result_id,
                sr.ref_id <= objects.c.last_ref_id,
            )
        )

    totals: dict[str, int] = {}
    found: dict[str, list[tuple[int, SourceRef]]] = defaultdict(list)
    rows = fetch(c, ("cited_refs", object_type), build, rid=rid, ids=bound_ids(c, ids))
    for ref_id, object_id, source_type, source_id, field, start, end, total in rows:
        found[object_id].append((ref_id, SourceRef(source_type, source_id, field, start, end)))
        totals[object_id] = total
    return {
        key: (tuple(ref for _, ref in sorted(refs)), totals[key]) for key, refs in found.items()
    }


def _rows(c: Connection, table: Any, column: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    """The view's columns of the rows of ``table`` whose ``column`` is one of ``ids``."""
    if not ids:
        return []

    def build() -> Select[Any]:
        return view_select(table).where(among(c, table.c[column], ids, name="ids"))  # type: ignore[no-any-return]

    names = view_columns(table)
    return [
        dict(zip(names, row, strict=True))
        for row in fetch(c, ("rows", table.name, column), build, ids=bound_ids(c, ids))
    ]


def event_links(c: Connection, event_ids: Sequence[str]) -> list[tuple[str, str]]:
    """The (event, entity) links of the events, by event then entity."""
    if not event_ids:
        return []
    ee = t.event_entities.c

    def build() -> Select[Any]:
        return (
            select(ee.event_id, ee.entity_id)
            .where(among(c, ee.event_id, event_ids, name="ids"))
            .order_by(ee.event_id, ee.entity_id)
        )

    return fetch(c, "event_links", build, ids=bound_ids(c, event_ids))


def events_of(
    c: Connection,
    rid: str,
    event_ids: Sequence[str],
    links: Sequence[tuple[str, str]] | None = None,
) -> list[EventView]:
    """The shown events with their entities, story lines and references, oldest first
    (``links``: their ``event_links`` when already read)."""
    entities: dict[str, list[str]] = defaultdict(list)
    lines: dict[str, list[str]] = defaultdict(list)
    if event_ids:
        for event_id, entity_id in event_links(c, event_ids) if links is None else links:
            entities[event_id].append(entity_id)

        def build() -> Select[Any]:
            return (
                select(_SLE.event_id, _SLE.story_line_id)
                .where(
                    among(c, _SLE.event_id, event_ids, name="ids"),
                    is_published(bindparam("rid", rid), "story_line", _SLE.story_line_id),
                )
                .order_by(_SLE.event_id, _SLE.story_line_id)
            )

        for event_id, line_id in fetch(
            c, "event_lines", build, rid=rid, ids=bound_ids(c, event_ids)
        ):
            lines[event_id].append(line_id)
    refs = cited_refs(c, rid, "event", event_ids)
    no_refs: tuple[tuple[SourceRef, ...], int] = ((), 0)
    views = []
    for row in _rows(c, t.graph_events, "event_id", event_ids):
        event_id = row["event_id"]
        views.append(
            event_view(
                row,
                tuple(entities.get(event_id, ())),
                tuple(lines.get(event_id, ())),
                *refs.get(event_id, no_refs),
            )
        )
    views.sort(key=event_order)
    return views


def _lines(
    c: Connection, rid: str, line_ids: Sequence[str], events: Sequence[EventView]
) -> list[StoryLineView]:
    """The lines with their shown events; counts and first/last over all their events."""
    shown: dict[str, list[str]] = defaultdict(list)
    for event in events:
        for line_id in event.story_line_ids:
            shown[line_id].append(event.event_id)
    totals: dict[str, tuple[int, datetime | None, datetime | None]] = {}
    if line_ids:

        def build() -> Select[Any]:
            return (
                select(
                    _SLE.story_line_id,
                    func.count(),
                    func.min(_GE.occurred_at),
                    func.max(_GE.occurred_at),
                )
                .join(t.graph_events, _GE.event_id == _SLE.event_id)
                .where(
                    among(c, _SLE.story_line_id, line_ids, name="ids"),
                    is_published(bindparam("rid", rid), "event", _SLE.event_id),
                )
                .group_by(_SLE.story_line_id)
            )

        for line_id, count, first_at, last_at in fetch(
            c, "line_totals", build, rid=rid, ids=bound_ids(c, line_ids)
        ):
            totals[line_id] = (count, first_at, last_at)
    views = [
        story_line_view(
            row,
            tuple(shown.get(row["story_line_id"], ())),
            *totals.get(row["story_line_id"], (0, None, None)),
        )
        for row in _rows(c, t.story_lines, "story_line_id", line_ids)
    ]
    return sorted(views, key=lambda s: (s.first_at is None, s.first_at or "", s.story_line_id))


def _experience_event_ids(
    c: Connection, rid: str, experience_ids: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Each experience's events in the result's time order (others after, by id)."""
    xe = t.experience_events.c
    members: dict[str, list[str]] = defaultdict(list)
    if experience_ids:
        for experience_id, event_id in c.execute(
            select(xe.experience_id, xe.event_id)
            .where(among(c, xe.experience_id, experience_ids))
            .order_by(xe.experience_id, xe.event_id)
        ).all():
            members[experience_id].append(event_id)
    wanted = sorted({e for ids in members.values() for e in ids})
    times: dict[str, datetime | None] = {}
    if wanted:
        times.update(
            c.execute(
                select(_GE.event_id, _GE.occurred_at).where(
                    among(c, _GE.event_id, wanted), is_published(rid, "event", _GE.event_id)
                )
            ).all()
        )

    def position(event_id: str) -> tuple[bool, bool, datetime | str, str]:
        if event_id not in times:
            return (True, False, "", "")
        at = times[event_id]
        return (False, at is None, at or "", event_id)

    return {key: tuple(sorted(ids, key=position)) for key, ids in members.items()}


_Cited = TypeVar("_Cited", EventView, EntityView, RelationView, EntityChangeView, OpenItemView)


def _cap(items: Sequence[_Cited]) -> tuple[_Cited, ...]:
    return tuple(
        dataclasses.replace(item, sources=item.sources[:SOURCES_PER_OBJECT])
        if len(item.sources) > SOURCES_PER_OBJECT
        else item
        for item in items
    )


def capped(view: GraphView) -> GraphView:
    """The view with at most ``SOURCES_PER_OBJECT`` references per object."""
    return dataclasses.replace(
        view,
        events=_cap(view.events),
        entities=_cap(view.entities),
        relations=_cap(view.relations),
        changes=_cap(view.changes),
        open_items=_cap(view.open_items),
    )


def assemble(
    c: Connection,
    result: ResultSummary,
    story_line_id: str | None,
    events: list[EventView],
    shown: Involved,
    line_ids: Sequence[str],
    totals: GraphTotals,
    limit: int | None,
    offset: int,
) -> GraphView:
    rid = result.result_id
    entity_ids = sorted(shown.entities)
    relation_ids = sorted(shown.relations)
    change_ids = sorted(shown.changes)
    item_keys = sorted(shown.open_items)
    experience_ids = sorted(shown.experiences)
    entity_refs = cited_refs(c, rid, "entity", entity_ids)
    relation_refs = cited_refs(c, rid, "relation", relation_ids)
    change_refs = cited_refs(c, rid, "entity_change", change_ids)
    item_refs = cited_refs(c, rid, "open_item", item_keys)
    members = _experience_event_ids(c, rid, experience_ids)
    return GraphView(
        result=result,
        story_line_id=story_line_id,
        as_published=False,
        events=tuple(events),
        entities=tuple(
            sorted(
                (
                    entity_view(row, *entity_refs.get(row["entity_id"], ((), 0)))
                    for row in _rows(c, t.entities, "entity_id", entity_ids)
                ),
                key=lambda e: (e.kind, e.name, e.entity_id),
            )
        ),
        relations=tuple(
            sorted(
                (
                    relation_view(row, *relation_refs.get(row["relation_id"], ((), 0)))
                    for row in _rows(c, t.relations, "relation_id", relation_ids)
                ),
                key=lambda r: (r.from_entity_id, r.type, r.to_entity_id),
            )
        ),
        changes=tuple(
            sorted(
                (
                    change_view(row, *change_refs.get(row["change_id"], ((), 0)))
                    for row in _rows(c, t.entity_changes, "change_id", change_ids)
                ),
                key=lambda ch: (ch.entity_id, ch.change_id),
            )
        ),
        open_items=tuple(
            sorted(
                (
                    open_item_view(row, *item_refs.get(row["item_key"], ((), 0)))
                    for row in _rows(c, t.open_items, "item_key", item_keys)
                ),
                key=lambda o: (o.status != "open", o.key),
            )
        ),
        story_lines=tuple(_lines(c, rid, line_ids, events)),
        experiences=tuple(
            sorted(
                (
                    experience_view(row, members.get(row["experience_id"], ()))
                    for row in _rows(c, t.experiences, "experience_id", experience_ids)
                ),
                key=lambda x: (x.title, x.experience_id),
            )
        ),
        totals=totals,
        limit=limit,
        offset=offset,
    )
