"""One object of one result with the sources that result cited for it (REV-12 ``object``),
and one conversation's sources page by page, in reading order."""

from __future__ import annotations

import dataclasses

from sqlalchemy import select
from sqlalchemy.engine import Connection

from proctor.errors import ConfigError, NotFoundError
from proctor.graph.views import ResultObject, SourcePage
from proctor.store import _schema as t
from proctor.store._graph_edits import edits_of
from proctor.store._graph_objects import cited_refs
from proctor.store._graph_rows import (
    change_view,
    entity_view,
    event_view,
    relation_view,
    view_select,
)
from proctor.store._graph_sources import excerpts, reading_order, source_text

OBJECT_TYPES = ("entity", "relation", "entity_change", "event")
"""The objects a result publishes that can be looked at one by one."""

_TABLES = {
    "entity": (t.entities, t.entities.c.entity_id),
    "relation": (t.relations, t.relations.c.relation_id),
    "entity_change": (t.entity_changes, t.entity_changes.c.change_id),
    "event": (t.graph_events, t.graph_events.c.event_id),
}


def resolve_published(c: Connection, result_id: str, ref: str) -> tuple[str, str]:
    """The (type, id) that an id or unique prefix names among what the result published."""
    ro = t.result_objects.c
    found = list(
        c.execute(
            select(ro.object_type, ro.object_id)
            .where(
                ro.result_id == result_id,
                ro.object_type.in_(OBJECT_TYPES),
                ro.object_id.startswith(ref, autoescape=True),
            )
            .limit(3)
        )
    )
    exact = [(str(kind), str(oid)) for kind, oid in found if oid == ref]
    if len(exact) == 1:
        return exact[0]
    if not found:
        raise NotFoundError(
            f"result {result_id[:12]} published no entity, relation, change or event {ref!r}; "
            "its graph lists the ids"
        )
    if len(found) > 1:
        raise ConfigError(f"{ref!r} matches several objects of the result; give more of the id")
    return str(found[0][0]), str(found[0][1])


def result_object(c: Connection, result_id: str, ref: str) -> ResultObject:
    """One object ``result_id`` published, with the sources it cited and a person's edits."""
    object_type, object_id = resolve_published(c, result_id, ref)
    table, column = _TABLES[object_type]
    row = c.execute(view_select(table).where(column == object_id)).mappings().first()
    if row is None:
        raise NotFoundError(f"{object_type} {object_id!r} is no longer stored")
    refs, total = cited_refs(c, result_id, object_type, [object_id]).get(object_id, ((), 0))
    cited = excerpts(c, [(r.source_type, r.source_id) for r in refs])
    sources = tuple(dict.fromkeys(cited[(r.source_type, r.source_id)] for r in refs))
    detail = ResultObject(
        result_id=result_id,
        object_type=object_type,
        object_id=object_id,
        sources=sources,
        source_count=total,
        edits=tuple(edits_of(c, object_type, object_id)) if object_type != "event" else (),
    )
    if object_type == "entity":
        return dataclasses.replace(detail, entity=entity_view(row, refs, total))
    if object_type == "relation":
        return dataclasses.replace(detail, relation=relation_view(row, refs, total))
    if object_type == "entity_change":
        return dataclasses.replace(detail, change=change_view(row, refs, total))
    ee, sle = t.event_entities.c, t.story_line_events.c
    entity_ids = tuple(
        c.execute(
            select(ee.entity_id).where(ee.event_id == object_id).order_by(ee.entity_id)
        ).scalars()
    )
    line_ids = tuple(
        c.execute(
            select(sle.story_line_id)
            .where(sle.event_id == object_id, sle.result_id == result_id)
            .order_by(sle.story_line_id)
        ).scalars()
    )
    return dataclasses.replace(detail, event=event_view(row, entity_ids, line_ids, refs, total))


def conversation_sources(
    c: Connection, conversation_id: str, limit: int, offset: int
) -> SourcePage:
    """``limit`` sources of a conversation after skipping ``offset``, in reading order."""
    timeline = reading_order(c, conversation_id)
    page = timeline[offset : offset + limit]
    return SourcePage(
        conversation_id=conversation_id,
        total=len(timeline),
        sources=tuple(source_text(c, kind, source_id) for kind, source_id in page),
    )
