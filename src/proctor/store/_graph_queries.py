"""Reading the story graph (REV-8 … REV-12): results, stories, candidates, one entity.

Every function takes one connection, so a caller that opens one read transaction gets one
consistent snapshot for the whole answer. A result is named by its exact id or a unique
prefix, never replaced by another: an unknown id is a ``NotFoundError``. One result's
graph is read in ``_graph_result``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, literal_column, or_, select
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.sql.elements import ColumnElement

from proctor.errors import ConfigError, NotFoundError
from proctor.graph import EntityCandidate, SourceRef, StoryLineCandidate
from proctor.graph.views import (
    EntityDetail,
    ResultSummary,
    StoryLineView,
)
from proctor.store import _schema as t
from proctor.store._graph_result import event_order
from proctor.store._graph_rows import (
    among,
    bound_ids,
    change_view,
    chunks,
    coverage_from_json,
    entity_view,
    event_view,
    fetch,
    ref_from_row,
    relation_view,
    story_line_view,
    view_select,
)

_R = t.results.c
_RO = t.result_objects.c


# --- results -------------------------------------------------------------------------


def _results_query() -> Any:
    # Never the snapshot: it can hold thousands of objects and only history reads need it.
    columns = [column for column in t.results.c if column.name != "snapshot"]
    return select(*columns, t.projects.c.name.label("project_name")).outerjoin(
        t.projects, t.projects.c.project_id == _R.project_id
    )


def _summary(row: RowMapping) -> ResultSummary:
    return ResultSummary(
        result_id=row["result_id"],
        run_id=row["run_id"],
        scope_key=row["scope_key"],
        project_id=row["project_id"],
        project_name=row["project_name"],
        time_from=row["time_from"],
        time_to=row["time_to"],
        trigger=row["trigger"],
        summary=row["summary"],
        change_digest=row["change_digest"],
        coverage=coverage_from_json(row["coverage"]),
        complete=bool(row["complete"]),
        created_at=row["created_at"],
    )


def resolve_result_id(c: Connection, ref: str) -> str:
    """A result id from a full id or a unique prefix; never another result."""
    if not ref:
        raise NotFoundError("give a result id; `proctor graph list` shows them")
    exact = c.execute(select(_R.result_id).where(_R.result_id == ref)).scalar_one_or_none()
    if exact is not None:
        return str(exact)
    matches = list(
        c.execute(
            select(_R.result_id).where(_R.result_id.startswith(ref, autoescape=True)).limit(2)
        ).scalars()
    )
    if not matches:
        raise NotFoundError(f"no result {ref!r}; `proctor graph list` shows the results")
    if len(matches) > 1:
        raise ConfigError(f"{ref!r} matches several results; give more of the id")
    return str(matches[0])


def _stamp_from_index() -> Any:
    """``results.created_at`` read from its index (SQLite): the column lies after
    ``snapshot`` in the row, so reading it from the row walks the whole snapshot's
    overflow pages (2.4 MB for a 2,191-event result: 0.47 ms, and more once a write has
    emptied the reader's page cache); its index holds it beside the rowid (0.01 ms: a scan
    of one small entry per result)."""
    # SQLAlchemy renders no INDEXED BY; without it SQLite reads the row by its rowid.
    return literal_column(
        "(SELECT stamp.created_at FROM results AS stamp INDEXED BY ix_results_created_at"
        " WHERE stamp.rowid = results.rowid)",
        t.results.c.created_at.type,
    ).label("created_at")


def result_summary(c: Connection, result_id: str) -> ResultSummary:
    """One result (exact id)."""
    query = _results_query()
    if c.dialect.name == "sqlite":
        query = query.with_only_columns(
            *(column for column in query.selected_columns if column.name != "created_at"),
            _stamp_from_index(),
        )
    row = c.execute(query.where(_R.result_id == result_id)).mappings().first()
    if row is None:
        raise NotFoundError(f"no result {result_id!r}")
    return _summary(row)


def _target_condition(c: Connection, target: str) -> ColumnElement[bool]:
    """Results for a scope key or a project (name or id); a project's includes global ones."""
    project_ids = list(
        c.execute(
            select(t.projects.c.project_id).where(
                or_(t.projects.c.name == target, t.projects.c.project_id == target)
            )
        ).scalars()
    )
    condition: ColumnElement[bool] = _R.scope_key == target
    if project_ids:
        condition = or_(condition, _R.project_id.in_(project_ids), _R.project_id.is_(None))
    elif c.execute(select(_R.result_id).where(condition).limit(1)).first() is None:
        raise NotFoundError(
            f"no project or review scope {target!r}; `proctor graph list` shows the results"
        )
    return condition


def overview(c: Connection, target: str | None, limit: int) -> list[ResultSummary]:
    """Results for a target (all when None), newest first, filtered before the limit."""
    query = _results_query()
    if target is not None:
        query = query.where(_target_condition(c, target))
    rows = c.execute(
        query.order_by(_R.created_at.desc(), _R.result_id.desc()).limit(limit)
    ).mappings()
    return [_summary(row) for row in rows]


def latest_result(c: Connection, scope_key: str) -> ResultSummary | None:
    """The newest result of exactly this scope."""
    row = (
        c.execute(
            _results_query()
            .where(_R.scope_key == scope_key)
            .order_by(_R.created_at.desc(), _R.result_id.desc())
            .limit(1)
        )
        .mappings()
        .first()
    )
    return None if row is None else _summary(row)


EXCERPTED_SOURCES = ("message", "tool_call", "task_event")
"""The source types a graph view quotes (``_graph_sources.excerpts``)."""


def graph_version(c: Connection) -> str:
    """A short string that changes whenever a result's graph view or a story list may:
    a result published (a publish rewrites shared objects: entities, story lines …), a
    person's edit (each one writes a ``graph_edits`` row, never deleted), a project added
    (it changes what a target names), a conversation added, renamed or deleted, or a
    quoted source added or revised (every write path raises ``sources.updated_at``, as the
    search index's freshness check relies on). Cheap: counts of small tables and the
    newest time of indexed columns, one statement.
    """
    r, e, p, cv, s = t.results.c, t.graph_edits.c, t.projects.c, t.conversations.c, t.sources.c
    parts = [
        select(func.count()).select_from(t.results).scalar_subquery(),
        select(func.max(r.created_at)).scalar_subquery(),
        select(func.count()).select_from(t.graph_edits).scalar_subquery(),
        select(func.max(e.edit_id)).scalar_subquery(),
        select(func.count(p.project_id)).scalar_subquery(),
        select(func.count()).select_from(t.conversations).scalar_subquery(),
        select(func.max(cv.updated_at)).scalar_subquery(),
        *(
            select(func.max(s.updated_at)).where(s.source_type == kind).scalar_subquery()
            for kind in EXCERPTED_SOURCES
        ),
    ]
    row = c.execute(select(*parts)).one()
    text = "|".join("" if value is None else str(value) for value in row)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


# --- stories, candidates, entities -----------------------------------------------------


def stories(c: Connection, target: str) -> list[StoryLineView]:
    """Story lines of a project (name or id) or of a review scope, most recently updated first."""
    sl = t.story_lines.c
    project_ids = list(
        c.execute(
            select(t.projects.c.project_id).where(
                or_(t.projects.c.name == target, t.projects.c.project_id == target)
            )
        ).scalars()
    )
    in_scope = sl.story_line_id.in_(
        select(_RO.object_id)
        .join(t.results, _R.result_id == _RO.result_id)
        .where(_RO.object_type == "story_line", _R.scope_key == target)
    )
    condition = or_(in_scope, sl.project_id.in_(project_ids)) if project_ids else in_scope
    if (
        not project_ids
        and c.execute(select(_R.result_id).where(_R.scope_key == target).limit(1)).first() is None
    ):
        raise NotFoundError(f"no project or review scope {target!r}")
    rows = list(
        c.execute(
            view_select(t.story_lines)
            .where(condition)
            .order_by(sl.updated_at.desc(), sl.story_line_id)
        ).mappings()
    )
    return _with_events(c, rows)


def _with_events(c: Connection, rows: Sequence[RowMapping]) -> list[StoryLineView]:
    sle = t.story_line_events.c
    ev = t.graph_events.c
    members: dict[str, list[tuple[datetime | None, str]]] = defaultdict(list)
    ids = [row["story_line_id"] for row in rows]
    # The lines' events, then those events' times: joined in one statement, SQLite's
    # planner scans every event and probes each line for it (thousands of times the rows).
    pairs: list[tuple[str, str]] = []
    times: dict[str, datetime | None] = {}
    if ids:
        lines = bound_ids(c, ids)
        pairs.extend(
            fetch(
                c,
                "story_line_events",
                lambda: select(sle.story_line_id, sle.event_id).where(
                    among(c, sle.story_line_id, ids, name="ids")
                ),
                ids=lines,
            )
        )
        times.update(
            fetch(
                c,
                "story_line_times",
                lambda: select(ev.event_id, ev.occurred_at).where(
                    ev.event_id.in_(
                        select(sle.event_id).where(among(c, sle.story_line_id, ids, name="ids"))
                    )
                ),
                ids=lines,
            )
        )
    for line_id, event_id in pairs:
        if event_id in times:  # the join's condition: an event that exists
            members[line_id].append((times[event_id], event_id))
    views = []
    for row in rows:
        found = sorted(
            members.get(row["story_line_id"], ()), key=lambda m: (m[0] is None, m[0] or "", m[1])
        )
        stamps = [m[0] for m in found if m[0] is not None]
        views.append(
            dataclasses.replace(
                story_line_view(row, tuple(m[1] for m in found)),
                first_at=min(stamps, default=None),
                last_at=max(stamps, default=None),
            )
        )
    return views


def entity_candidates(
    c: Connection,
    project_id: str | None,
    limit: int,
    cross_project: bool,
    states: Sequence[str] | None = None,
) -> list[EntityCandidate]:
    """Entities a model may refer to (REV-3): most recently updated first, never removed ones."""
    e = t.entities.c
    query = view_select(t.entities).where(e.state != "removed")
    if states is not None:
        query = query.where(e.state.in_(list(states)))
    if project_id is not None and not cross_project:
        query = query.where(e.project_id == project_id)
    rows = c.execute(query.order_by(e.updated_at.desc(), e.entity_id).limit(limit)).mappings()
    return [
        EntityCandidate(
            entity_id=row["entity_id"],
            project_id=row["project_id"],
            kind=row["kind"],
            name=row["name"],
            description=row["description"],
            updated_at=row["updated_at"],
        )
        for row in rows
    ]


def story_line_candidates(
    c: Connection, project_id: str | None, limit: int
) -> list[StoryLineCandidate]:
    """Story lines the merge may continue (``line_N``), most recently updated first."""
    sl = t.story_lines.c
    query = select(t.story_lines)
    if project_id is not None:
        query = query.where(sl.project_id == project_id)
    rows = c.execute(query.order_by(sl.updated_at.desc(), sl.story_line_id).limit(limit)).mappings()
    return [
        StoryLineCandidate(
            story_line_id=row["story_line_id"],
            project_id=row["project_id"],
            title=row["title"],
            summary=row["summary"],
            parent_id=row["parent_id"],
            updated_at=row["updated_at"],
        )
        for row in rows
    ]


def _all_refs(
    c: Connection, object_type: str, object_ids: Sequence[str]
) -> dict[str, tuple[SourceRef, ...]]:
    """Every reference any result recorded for the objects, without repeats."""
    sr = t.source_refs.c
    found: dict[str, dict[SourceRef, None]] = defaultdict(dict)
    for part in chunks(list(object_ids)):
        for row in c.execute(
            select(t.source_refs)
            .where(sr.object_type == object_type, sr.object_id.in_(part))
            .order_by(sr.ref_id)
        ).mappings():
            found[row["object_id"]][ref_from_row(row)] = None
    return {object_id: tuple(refs) for object_id, refs in found.items()}


def entity_detail(c: Connection, entity_id: str) -> EntityDetail:
    """One entity (exact id) with its events, relations, changes, needs-review items, edits."""
    from proctor.store._graph_edits import edits_of, needs_review_of

    row = (
        c.execute(view_select(t.entities).where(t.entities.c.entity_id == entity_id))
        .mappings()
        .first()
    )
    if row is None:
        raise NotFoundError(f"no entity {entity_id!r}")
    ee = t.event_entities.c
    event_rows = list(
        c.execute(
            view_select(t.graph_events).where(
                t.graph_events.c.event_id.in_(select(ee.event_id).where(ee.entity_id == entity_id))
            )
        ).mappings()
    )
    r = t.relations.c
    relation_rows = list(
        c.execute(
            view_select(t.relations).where(
                or_(r.from_entity_id == entity_id, r.to_entity_id == entity_id)
            )
        ).mappings()
    )
    change_rows = list(
        c.execute(
            select(t.entity_changes)
            .where(t.entity_changes.c.entity_id == entity_id)
            .order_by(t.entity_changes.c.created_at, t.entity_changes.c.change_id)
        ).mappings()
    )
    event_refs = _all_refs(c, "event", [e["event_id"] for e in event_rows])
    relation_refs = _all_refs(c, "relation", [x["relation_id"] for x in relation_rows])
    change_refs = _all_refs(c, "entity_change", [x["change_id"] for x in change_rows])
    involved: dict[str, list[str]] = defaultdict(list)
    for part in chunks([e["event_id"] for e in event_rows]):
        for event_id, other_id in c.execute(
            select(ee.event_id, ee.entity_id).where(ee.event_id.in_(part)).order_by(ee.entity_id)
        ):
            involved[event_id].append(other_id)
    events = sorted(
        (
            event_view(e, tuple(involved[e["event_id"]]), (), event_refs.get(e["event_id"], ()))
            for e in event_rows
        ),
        key=event_order,
    )
    return EntityDetail(
        entity=entity_view(row, _all_refs(c, "entity", [entity_id]).get(entity_id, ())),
        events=tuple(events),
        relations=tuple(
            relation_view(x, relation_refs.get(x["relation_id"], ())) for x in relation_rows
        ),
        changes=tuple(change_view(x, change_refs.get(x["change_id"], ())) for x in change_rows),
        needs_review=tuple(needs_review_of(c, "entity", entity_id)),
        edits=tuple(edits_of(c, "entity", entity_id)),
    )
