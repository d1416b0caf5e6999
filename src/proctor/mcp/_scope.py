"""Which published result answers an agent, and what of a global one it may see (REV-12).

A conversation's project is covered by its own reviews and by global ones (a plain
`proctor review run` publishes a global result). The tools answer from the project's own
newest result first and fall back to the newest global one; a global result is narrowed to
the project's own facts, so an agent bound to one project never reads another's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from proctor.graph.views import EventView, GraphTotals, GraphView, ResultSummary
from proctor.store import ReadStore

_GLOBAL_ALLOWANCE = 50
"""Extra rows read past the limit, so one kind of result does not crowd out the other."""


def project_id_of(store: ReadStore, project: str) -> str | None:
    """The id of the project named ``project`` (None when it is gone)."""
    return next((p.project_id for p in store.projects() if p.name == project), None)


def covering_results(store: ReadStore, project: str, limit: int) -> list[ResultSummary]:
    """Results that cover the project: its own (newest first), then global ones."""
    found = store.overview(project, limit + _GLOBAL_ALLOWANCE)
    own = [result for result in found if not result.is_global]
    everywhere = [result for result in found if result.is_global]
    return (own + everywhere)[:limit]


def answered_from(result: ResultSummary, project: str) -> dict[str, Any]:
    """The sentence and ids that say which result an answer came from."""
    if result.is_global:
        why = (
            f"Project {project!r} has no review of its own; this is the newest global review, "
            f"narrowed to the project's own facts."
        )
    else:
        why = f"The newest review of project {project!r}."
    return {
        "result_id": result.result_id,
        "scope": result.scope_label,
        "created_at": result.created_at,
        "why": why,
    }


def _newest_first(event: EventView) -> tuple[bool, str]:
    return (
        event.occurred_at is not None,
        event.occurred_at.isoformat() if event.occurred_at else "",
    )


def narrowed(view: GraphView, project_id: str | None, limit: int) -> GraphView:
    """A global result's view holding only the project's facts, at most ``limit`` events
    (the newest), with what they involve; totals count the project's whole share."""
    events = [e for e in view.events if e.project_id == project_id]
    entities = [e for e in view.entities if e.project_id == project_id]
    relations = [r for r in view.relations if r.project_id == project_id]
    open_items = [o for o in view.open_items if o.project_id == project_id]
    lines = [s for s in view.story_lines if s.project_id == project_id]
    experiences = [x for x in view.experiences if x.project_id == project_id]
    entity_ids = {e.entity_id for e in entities}
    changes = [c for c in view.changes if c.entity_id in entity_ids]
    totals = GraphTotals(
        events=len(events),
        entities=len(entities),
        relations=len(relations),
        changes=len(changes),
        open_items=len(open_items),
        story_lines=len(lines),
        experiences=len(experiences),
    )
    truncated = len(events) > limit
    if truncated:
        keep = {id(e) for e in sorted(events, key=_newest_first, reverse=True)[:limit]}
        events = [e for e in events if id(e) in keep]
        involved = {entity for e in events for entity in e.entity_ids}
        entities = [e for e in entities if e.entity_id in involved]
        relations = [
            r for r in relations if r.from_entity_id in involved and r.to_entity_id in involved
        ]
        changes = [c for c in changes if c.entity_id in involved]
        open_items = [o for o in open_items if set(o.entity_ids) & involved]
        line_ids = {line for e in events for line in e.story_line_ids}
        lines = [s for s in lines if s.story_line_id in line_ids]
    cited = {
        (ref.source_type, ref.source_id)
        for group in (events, entities, relations, changes, open_items)
        for item in group
        for ref in item.sources
    }
    return dataclasses.replace(
        view,
        events=tuple(events),
        entities=tuple(entities),
        relations=tuple(relations),
        changes=tuple(changes),
        open_items=tuple(open_items),
        story_lines=tuple(lines),
        experiences=tuple(experiences),
        sources={key: value for key, value in view.sources.items() if key in cited},
        totals=totals,
        limit=limit,
        offset=0,
    )
