"""Publishing a review (REV-1, REV-4, REV-7 … REV-10): one transaction, all or nothing.

``publish`` writes the result row, entities, events, entity changes, relations, source
references, open items, story lines, experiences, ``result_objects``, checkpoints, the
graph snapshot and the run's final state together; any error rolls all of it back, so a
crash leaves the old graph or the new one, never a mix. A large publish refreshes the
planner statistics of the tables it grew, in the same transaction.

User edits win (REV-4): an existing entity or relation is updated only while it is
``automatic``; for a protected one a differing proposal becomes a ``needs_review`` row
(once per distinct proposal), and a revoked relation is never recreated. Story lines the
merge chose (``must_exist``) are re-checked here, inside the transaction (REV-9). These
decisions are ``proctor.graph``'s publish policy (pure functions over the draft's facts
and the stored state they name); the writers here read that state and execute them.
Publishing is idempotent per run: a run that already has a result gets that result's
outcome back and nothing is written.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from proctor._util.collector import collector_paused
from proctor.errors import NotFoundError
from proctor.graph import ResultDraft
from proctor.graph.views import PublishOutcome
from proctor.store import _schema as t
from proctor.store._graph_publish_facts import (
    write_changes,
    write_entities,
    write_events,
    write_relations,
)
from proctor.store._graph_publish_state import COUNTS, PublishState
from proctor.store._graph_publish_threads import (
    write_checkpoints,
    write_experiences,
    write_open_items,
    write_story_lines,
)
from proctor.store._graph_queries import result_summary
from proctor.store._graph_result import load_result_graph
from proctor.store._graph_rows import coverage_json
from proctor.store._graph_snapshot import result_snapshot, snapshot_json
from proctor.store._statistics import LARGE_WRITE_ROWS, refresh_statistics

GRAPH_TABLES = (
    "entities",
    "graph_events",
    "event_entities",
    "relations",
    "story_lines",
    "story_line_events",
    "source_refs",
    "result_objects",
    "review_checkpoints",
)
"""The tables a publish grows; a large publish refreshes their planner statistics."""


def publish(c: Connection, draft: ResultDraft, run_status: str, now: datetime) -> PublishOutcome:
    """Write a review's result and graph in the caller's transaction (see the module doc)."""
    run = c.execute(
        select(t.review_runs.c.run_id)
        .where(t.review_runs.c.run_id == draft.run_id)
        .with_for_update()
    ).first()
    if run is None:
        raise NotFoundError(
            f"no review run {draft.run_id!r}; a result is published for a run the review created"
        )
    existing = c.execute(
        select(t.results.c.result_id).where(t.results.c.run_id == draft.run_id)
    ).scalar_one_or_none()
    if existing is not None:
        counts = result_snapshot(c, existing).get("counts", {})
        return PublishOutcome(
            result_id=existing,
            run_id=draft.run_id,
            published=False,
            **{name: int(counts.get(name, 0)) for name in COUNTS},
        )
    # Tens of thousands of rows and views are built and dropped: the cyclic collector
    # would walk the heap again and again meanwhile (a fifth of a large publish).
    with collector_paused():
        return _run(PublishState(c, draft, now), run_status)


def _run(p: PublishState, run_status: str) -> PublishOutcome:
    draft = p.draft
    p.c.execute(
        insert(t.results).values(
            result_id=draft.result_id,
            run_id=draft.run_id,
            scope_key=draft.scope_key,
            project_id=draft.project_id,
            time_from=draft.time_from,
            time_to=draft.time_to,
            trigger=draft.trigger,
            summary=draft.summary,
            change_digest=draft.change_digest,
            coverage=coverage_json(draft.coverage),
            complete=draft.coverage.complete,
            snapshot={},
            created_at=p.now,
        )
    )
    write_entities(p)
    write_events(p)
    write_changes(p)
    write_relations(p)
    write_open_items(p)
    write_story_lines(p)
    write_experiences(p)
    write_checkpoints(p)
    p.flush()
    summary = result_summary(p.c, draft.result_id)
    snapshot = snapshot_json(load_result_graph(p.c, summary, p.refs, p.written()), p.counts)
    p.c.execute(
        update(t.results).where(t.results.c.result_id == draft.result_id).values(snapshot=snapshot)
    )
    p.c.execute(
        update(t.review_runs)
        .where(t.review_runs.c.run_id == draft.run_id)
        .values(
            status=run_status,
            result_id=draft.result_id,
            finished_at=p.now,
            updated_at=p.now,
        )
    )
    if len(p.objects) + len(p.refs) + p.counts["checkpoints"] >= LARGE_WRITE_ROWS:
        refresh_statistics(p.c, GRAPH_TABLES)
    return PublishOutcome(
        result_id=draft.result_id, run_id=draft.run_id, published=True, **p.counts
    )
