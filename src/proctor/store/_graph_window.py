"""A bounded part of one result's graph (REV-12): one story line, a window of events.

``read_graph`` answers ``graph(result_id, story_line_id, limit=…, offset=…)`` with
set-based queries: the view's events are counted and ordered in SQL and only the shown
ones are read; what they involve is fetched by id, the ids bound as one list (``among``:
the same statements for 3 events or 3,000). A view whose events all fit is the whole
result (read by ``load_result_graph``) or the whole story line. The rules of what a
truncated view holds are ``GraphView``'s; ``_graph_snapshot`` applies the same rules to a
stored snapshot, and the tests hold the two to each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from proctor.errors import ConfigError, NotFoundError
from proctor.graph.views import GraphTotals, GraphView, ResultSummary
from proctor.store import _schema as t
from proctor.store._graph_objects import (
    Involved,
    assemble,
    capped,
    event_links,
    events_of,
    is_published,
)
from proctor.store._graph_result import load_result_graph, published
from proctor.store._graph_rows import among, bound_ids, fetch

_RO = t.result_objects.c
_GE = t.graph_events.c
_SLE = t.story_line_events.c

Ids = Sequence[str] | Select[Any]
"""Object ids given as a list (bound as one value) or as a query selecting them."""


def _in(c: Connection, column: Any, ids: Ids) -> ColumnElement[bool]:
    """``column IN (…)`` covering ``ids``: a list bound as one value, or a subquery."""
    if isinstance(ids, Select):
        return column.in_(ids)  # type: ignore[no-any-return]
    return among(c, column, ids)


# --- which objects --------------------------------------------------------------------------


def published_counts(c: Connection, rid: str) -> GraphTotals:
    """How many objects of each type the result published."""
    found: dict[str, int] = dict(
        c.execute(
            select(_RO.object_type, func.count())
            .where(_RO.result_id == rid)
            .group_by(_RO.object_type)
        ).all()
    )
    return GraphTotals(
        events=found.get("event", 0),
        entities=found.get("entity", 0),
        relations=found.get("relation", 0),
        changes=found.get("entity_change", 0),
        open_items=found.get("open_item", 0),
        story_lines=found.get("story_line", 0),
        experiences=found.get("experience", 0),
    )


def match_story_line(rid: str, ref: str, known: Sequence[str]) -> str:
    """The one line of ``known`` that ``ref`` names (id or unique prefix); never another."""
    if ref in known:
        return ref
    matches = [line_id for line_id in known if line_id.startswith(ref)]
    if not matches:
        raise NotFoundError(f"result {rid[:12]} has no story line {ref!r}")
    if len(matches) > 1:
        raise ConfigError(f"{ref!r} matches several story lines; give more of it")
    return matches[0]


def subtree(root: str, parents: dict[str, str | None]) -> list[str]:
    """``root`` and its sub-threads, at any depth, among the lines ``parents`` knows."""
    lines = {root}
    grew = True
    while grew:
        children = {line_id for line_id, parent in parents.items() if parent in lines} - lines
        grew = bool(children)
        lines |= children
    return sorted(lines)


def _story_line_parents(c: Connection, rid: str) -> dict[str, str | None]:
    sl = t.story_lines.c
    query = select(sl.story_line_id, sl.parent_id).where(
        sl.story_line_id.in_(published(rid, "story_line"))
    )
    return {row[0]: row[1] for row in c.execute(query)}


def _view_events(rid: str, line_ids: Sequence[str] | None) -> Select[Any]:
    """The ids of the events a view holds: all the result's, or those of some lines."""
    query = published(rid, "event")
    if line_ids is not None:
        query = query.where(
            _RO.object_id.in_(select(_SLE.event_id).where(_SLE.story_line_id.in_(line_ids)))
        )
    return query


def _window(
    c: Connection, rid: str, line_ids: Sequence[str] | None, limit: int | None, offset: int
) -> list[str]:
    """The shown events of the view (``_view_events``): the newest ``limit`` after skipping
    the ``offset`` newest."""

    def build() -> Select[Any]:
        events = select(_RO.object_id).where(
            _RO.result_id == bindparam("rid", rid), _RO.object_type == "event"
        )
        if line_ids is not None:
            lines = among(c, _SLE.story_line_id, line_ids, name="lines")
            events = events.where(_RO.object_id.in_(select(_SLE.event_id).where(lines)))
        scope = events.subquery()
        query = (
            select(_GE.event_id)
            .join(scope, scope.c.object_id == _GE.event_id)
            .order_by(_GE.occurred_at.is_(None).desc(), _GE.occurred_at.desc(), _GE.event_id.desc())
            .offset(bindparam("offset", offset))
        )
        return query if limit is None else query.limit(bindparam("limit", limit))

    key = ("window", line_ids is None, limit is None)
    values: dict[str, Any] = {"rid": rid, "offset": offset}
    if line_ids is not None:
        values["lines"] = bound_ids(c, line_ids)
    if limit is not None:
        values["limit"] = limit
    return [row[0] for row in fetch(c, key, build, **values)]


def _involved(
    c: Connection, rid: str, event_ids: Ids, links: Sequence[tuple[str, str]] | None = None
) -> Involved:
    """What the events involve (the rules are ``GraphView``'s; ``links``: the events'
    ``event_links`` when already read)."""
    ee = t.event_entities.c
    linked: set[str]
    if links is not None:
        linked = {entity_id for _, entity_id in links}
    else:
        # Not DISTINCT: SQLite would walk the entity index in order, every link of every event.
        linked = set(
            c.execute(select(ee.entity_id).where(_in(c, ee.event_id, event_ids))).scalars().all()
        )
    ordered = sorted(linked)
    entities: set[str] = set()
    relations: set[str] = set()
    changes: set[str] = set()
    r, ch = t.relations.c, t.entity_changes.c
    if ordered:
        entity_ids = bound_ids(c, ordered)
        result_id: BindParameter[str] = bindparam("rid", rid)
        entities.update(
            row[0]
            for row in fetch(
                c,
                "involved_entities",
                lambda: select(_RO.object_id).where(
                    _RO.result_id == result_id,
                    _RO.object_type == "entity",
                    among(c, _RO.object_id, ordered, name="ids"),
                ),
                rid=rid,
                ids=entity_ids,
            )
        )
        for relation_id, to_entity_id in fetch(
            c,
            "involved_relations",
            lambda: select(r.relation_id, r.to_entity_id).where(
                among(c, r.from_entity_id, ordered, name="ids"),
                is_published(result_id, "relation", r.relation_id),
            ),
            rid=rid,
            ids=entity_ids,
        ):
            if to_entity_id in linked:
                relations.add(relation_id)
        changes.update(
            row[0]
            for row in fetch(
                c,
                "involved_changes",
                lambda: select(ch.change_id).where(
                    among(c, ch.entity_id, ordered, name="ids"),
                    is_published(result_id, "entity_change", ch.change_id),
                ),
                rid=rid,
                ids=entity_ids,
            )
        )
    oi = t.open_items.c
    open_items = {
        key
        for key, item_entities in fetch(
            c,
            "involved_open_items",
            lambda: select(oi.item_key, oi.entity_ids).where(
                oi.item_key.in_(
                    select(_RO.object_id).where(
                        _RO.result_id == bindparam("rid", rid), _RO.object_type == "open_item"
                    )
                )
            ),
            rid=rid,
        )
        if linked.intersection(item_entities or ())
    }
    xe = t.experience_events.c
    experiences = set(
        c.execute(
            select(xe.experience_id)
            .where(
                xe.experience_id.in_(published(rid, "experience")), _in(c, xe.event_id, event_ids)
            )
            .distinct()
        ).scalars()
    )
    return Involved(linked, entities, relations, changes, open_items, experiences)


def read_graph(
    c: Connection,
    result: ResultSummary,
    story_line_id: str | None,
    limit: int | None,
    offset: int,
) -> GraphView:
    """One result's graph, or one story line of it, bounded to ``limit`` events (no excerpts)."""
    rid = result.result_id
    if story_line_id is None:
        totals = published_counts(c, rid)
        if offset == 0 and (limit is None or totals.events <= limit):
            view = capped(load_result_graph(c, result))
            return dataclasses.replace(view, totals=totals, limit=limit, offset=offset)
        shown_ids = _window(c, rid, None, limit, offset)
        links = event_links(c, shown_ids)
        shown = _involved(c, rid, shown_ids, links)
        events = events_of(c, rid, shown_ids, links)
        lines = sorted({line_id for event in events for line_id in event.story_line_ids})
    else:
        parents = _story_line_parents(c, rid)
        story_line_id = match_story_line(rid, story_line_id, sorted(parents))
        line_ids = subtree(story_line_id, parents)
        scope = _view_events(rid, line_ids)
        shown_ids = _window(c, rid, line_ids, limit, offset)
        links = event_links(c, shown_ids)
        shown = _involved(c, rid, shown_ids, links)
        events = events_of(c, rid, shown_ids, links)
        total = c.execute(select(func.count()).select_from(scope.subquery())).scalar_one()
        if len(shown_ids) == total:
            everything, lines = shown, line_ids
        else:
            everything = _involved(c, rid, scope)
            in_view = set(line_ids)
            lines = sorted(
                {line_id for event in events for line_id in event.story_line_ids} & in_view
            )
        totals = GraphTotals(
            events=total,
            entities=len(everything.entities),
            relations=len(everything.relations),
            changes=len(everything.changes),
            open_items=len(everything.open_items),
            story_lines=len(line_ids),
            experiences=len(everything.experiences),
        )
    return assemble(c, result, story_line_id, events, shown, lines, totals, limit, offset)
