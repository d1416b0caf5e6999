"""A scope's graph as of one result: every result of its scope up to it, merged (REV-12).

Each review publishes only what it saw change (its ``result_objects``); the objects
themselves are shared (a later review continues a story line, links new events to known
entities). ``project_graph(result)`` reads the newest ``limit`` events of every result of
the same scope published up to ``result`` — the overall newest ``limit`` are among them —
merges them by id and keeps what the shown events involve, by ``GraphView``'s rules. The
view's ``result`` is the one asked for; ``totals`` count distinct objects over all of the
merged results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from proctor.graph import SourceRef
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
from proctor.store._graph_queries import result_summary
from proctor.store._graph_result import event_order
from proctor.store._graph_window import read_graph

_R = t.results.c
_RO = t.result_objects.c

_Cited = TypeVar("_Cited", EventView, EntityView, RelationView, EntityChangeView, OpenItemView)
_Any = TypeVar("_Any")


def merged_results(c: Connection, result: ResultSummary) -> list[ResultSummary]:
    """The results of ``result``'s scope published up to it (itself included), oldest first."""
    ids = c.execute(
        select(_R.result_id)
        .where(_R.scope_key == result.scope_key, _R.created_at <= result.created_at)
        .order_by(_R.created_at, _R.result_id)
    ).scalars()
    return [result_summary(c, result_id) for result_id in ids]


def _totals(c: Connection, result_ids: Sequence[str]) -> GraphTotals:
    found: dict[str, int] = dict(
        c.execute(
            select(_RO.object_type, func.count(func.distinct(_RO.object_id)))
            .where(_RO.result_id.in_(list(result_ids)))
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


def _refs(*groups: Iterable[SourceRef]) -> tuple[SourceRef, ...]:
    return tuple(dict.fromkeys(ref for group in groups for ref in group))


def _merge_cited(older: _Cited, newer: _Cited) -> _Cited:
    """The newer reading of an object, citing what both results cited (capped)."""
    refs = _refs(newer.sources, older.sources)
    return dataclasses.replace(
        newer,
        sources=refs[:SOURCES_PER_OBJECT],
        source_count=max(newer.source_count + older.source_count, len(refs)),
    )


def _union(views: Sequence[Sequence[_Cited]], key: str) -> dict[str, _Cited]:
    merged: dict[str, _Cited] = {}
    for items in views:
        for item in items:
            object_id = getattr(item, key)
            known = merged.get(object_id)
            merged[object_id] = item if known is None else _merge_cited(known, item)
    return merged


def _by_id(views: Sequence[Sequence[_Any]], key: str) -> dict[str, _Any]:
    return {getattr(item, key): item for items in views for item in items}


def project_graph(c: Connection, result: ResultSummary, limit: int | None) -> GraphView:
    """The graph of ``result``'s scope as of ``result``: its results merged, bounded."""
    results = merged_results(c, result)
    views = [read_graph(c, summary, None, limit, 0) for summary in results]
    events = sorted(_union([v.events for v in views], "event_id").values(), key=event_order)
    truncated = any(v.truncated for v in views) or (limit is not None and len(events) > limit)
    if limit is not None and len(events) > limit:
        # The newest ``limit``, as SQL picks them: events without a time count as newest.
        events = sorted(events[::-1][:limit], key=event_order)
    shown = {e.event_id for e in events}
    entities = _union([v.entities for v in views], "entity_id")
    relations = _union([v.relations for v in views], "relation_id")
    changes = _union([v.changes for v in views], "change_id")
    open_items = _union([v.open_items for v in views], "key")
    experiences: dict[str, ExperienceView] = _by_id([v.experiences for v in views], "experience_id")
    lines: dict[str, StoryLineView] = {}
    line_events: dict[str, dict[str, None]] = {}
    line_counts: dict[str, int] = {}
    line_spans: dict[str, list[datetime]] = {}
    for view in views:
        for line in view.story_lines:
            line_id = line.story_line_id
            lines[line_id] = line
            line_events.setdefault(line_id, {}).update(dict.fromkeys(line.event_ids))
            line_counts[line_id] = line_counts.get(line_id, 0) + line.event_count
            line_spans.setdefault(line_id, []).extend(
                at for at in (line.first_at, line.last_at) if at is not None
            )
    if truncated:
        linked = {entity_id for e in events for entity_id in e.entity_ids}
        entities = {k: v for k, v in entities.items() if k in linked}
        relations = {
            k: r
            for k, r in relations.items()
            if r.from_entity_id in linked and r.to_entity_id in linked
        }
        changes = {k: ch for k, ch in changes.items() if ch.entity_id in linked}
        open_items = {k: o for k, o in open_items.items() if linked.intersection(o.entity_ids)}
        experiences = {k: x for k, x in experiences.items() if shown.intersection(x.event_ids)}
        in_lines = {line_id for e in events for line_id in e.story_line_ids}
        lines = {k: line for k, line in lines.items() if k in in_lines}
    order = {e.event_id: index for index, e in enumerate(events)}
    story_lines = []
    for line_id, line in lines.items():
        members = tuple(
            sorted((e for e in line_events[line_id] if e in order), key=lambda e: order[e])
        )
        spans = line_spans[line_id]
        story_lines.append(
            dataclasses.replace(
                line,
                event_ids=members,
                event_count=max(line_counts[line_id], len(line_events[line_id])),
                first_at=min(spans, default=None),
                last_at=max(spans, default=None),
            )
        )
    story_lines.sort(key=lambda s: (s.first_at is None, s.first_at or "", s.story_line_id))
    return GraphView(
        result=result,
        story_line_id=None,
        as_published=False,
        events=tuple(events),
        entities=tuple(sorted(entities.values(), key=lambda e: (e.kind, e.name, e.entity_id))),
        relations=tuple(
            sorted(relations.values(), key=lambda r: (r.from_entity_id, r.type, r.to_entity_id))
        ),
        changes=tuple(sorted(changes.values(), key=lambda ch: (ch.entity_id, ch.change_id))),
        open_items=tuple(sorted(open_items.values(), key=lambda o: (o.status != "open", o.key))),
        story_lines=tuple(story_lines),
        experiences=tuple(sorted(experiences.values(), key=lambda x: (x.title, x.experience_id))),
        totals=_totals(c, [r.result_id for r in results]),
        limit=limit,
        offset=0,
    )
