"""The story graph in the store: publish, a person's edits, and consistent reads.

``GraphReads`` (the queries) and ``GraphRepository`` (with publish and edits) are the
repository behind ``GraphRecords``. Writes go through ``_write()`` (one transaction each);
every query runs in one read transaction (``REPEATABLE READ`` on PostgreSQL, a WAL read
transaction on SQLite) so an answer never mixes two publishes. The work itself lives in ``_graph_publish`` (with its writers in
``_graph_publish_facts`` and ``_graph_publish_threads``), ``_graph_edits``,
``_graph_queries``, ``_graph_window`` with ``_graph_objects`` (one result's graph,
bounded), ``_graph_snapshot`` (what a result said then) and ``_graph_sources``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy.engine import Connection

from proctor._util.clock import utcnow
from proctor.graph import EntityCandidate, ResultDraft, StoryLineCandidate
from proctor.graph.views import (
    GRAPH_LIMIT,
    AttentionBucket,
    EntityDetail,
    GraphEdit,
    GraphView,
    NeedsReviewItem,
    PublishOutcome,
    ResultObject,
    ResultSummary,
    SourceContext,
    SourcePage,
    SourceText,
    StoryLineView,
)
from proctor.store import _graph_cumulative as cumulative_graph
from proctor.store import _graph_edits as edits
from proctor.store import _graph_findings as graph_findings
from proctor.store import _graph_object_detail as details
from proctor.store import _graph_queries as queries
from proctor.store import _graph_snapshot as snapshots
from proctor.store import _graph_sources as sources
from proctor.store import _graph_window as window
from proctor.store._base import Repository
from proctor.store._graph_publish import publish


class GraphReads(Repository):
    """The story graph's consistent reads (see ``GraphRecords``)."""

    @contextmanager
    def _snapshot(self) -> Iterator[Connection]:
        """One read transaction: everything read inside it comes from one state."""
        with self._read() as c:
            if c.dialect.name == "postgresql":
                c.execution_options(isolation_level="REPEATABLE READ")
            with c.begin():
                yield c

    def graph_version(self) -> str:
        """A short string that changes whenever a graph view or story list may change
        (``_graph_queries.graph_version``): what a reader may cache answers by."""
        with self._read() as c:
            return queries.graph_version(c)

    def resolve_graph_object(self, ref: str, object_type: str | None = None) -> tuple[str, str]:
        """The (type, id) an id or unique prefix names among editable objects."""
        with self._snapshot() as c:
            return edits.resolve_object(c, ref, object_type)

    def needs_review_items(self, status: str | None = "open") -> list[NeedsReviewItem]:
        """Automatic proposals that differ from a person's edit (None: every status)."""
        with self._snapshot() as c:
            return edits.needs_review_items(c, status)

    def overview(self, target: str | None = None, limit: int = 20) -> list[ResultSummary]:
        """Results for a scope key or project (all when None), newest first.

        The target filters before the limit; a project's overview includes global results
        (``ResultSummary.is_global``). An unknown target is a ``NotFoundError``.
        """
        with self._snapshot() as c:
            return queries.overview(c, target, limit)

    def resolve_result_id(self, ref: str) -> str:
        """A result id from a full id or unique prefix."""
        with self._snapshot() as c:
            return queries.resolve_result_id(c, ref)

    def result(self, result_id: str) -> ResultSummary:
        """One result (id or unique prefix)."""
        with self._snapshot() as c:
            return queries.result_summary(c, queries.resolve_result_id(c, result_id))

    def latest_result(self, scope_key: str) -> ResultSummary | None:
        """The newest result of exactly this scope."""
        with self._snapshot() as c:
            return queries.latest_result(c, scope_key)

    def graph(
        self,
        result_id: str,
        story_line_id: str | None = None,
        *,
        as_published: bool = False,
        limit: int | None = GRAPH_LIMIT,
        offset: int = 0,
    ) -> GraphView:
        """What one result published (or one story line of it); never another result's graph.

        Objects carry their current names and states (a person's later edits show);
        ``as_published`` reads the result's snapshot instead: what it said then (REV-8).
        At most ``limit`` events are shown (None: all), the newest after skipping the
        ``offset`` newest, with what they involve; ``GraphView.totals`` counts the whole
        view. A bad result or story line id is a ``NotFoundError``.
        """
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1 (or None for every event), not {limit}")
        if offset < 0:
            raise ValueError(f"offset must not be negative, not {offset}")
        with self._snapshot() as c:
            summary = queries.result_summary(c, queries.resolve_result_id(c, result_id))
            if as_published:
                view = snapshots.graph_from_snapshot(
                    summary,
                    snapshots.result_snapshot(c, summary.result_id),
                    story_line_id,
                    limit,
                    offset,
                )
            else:
                view = window.read_graph(c, summary, story_line_id, limit, offset)
            cited = {
                (ref.source_type, ref.source_id)
                for group in (
                    view.events,
                    view.entities,
                    view.relations,
                    view.changes,
                    view.open_items,
                )
                for item in group
                for ref in item.sources
            }
            return dataclasses.replace(view, sources=sources.excerpts(c, cited))

    def project_graph(self, result_id: str, *, limit: int | None = GRAPH_LIMIT) -> GraphView:
        """The graph of a result's scope as of that result (id or unique prefix): every
        result of the scope published up to it, merged, with the objects' current state.

        At most ``limit`` events are shown (None: all), the newest, with what they involve;
        ``totals`` count distinct objects over the merged results (``_graph_cumulative``).
        """
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1 (or None for every event), not {limit}")
        with self._snapshot() as c:
            summary = queries.result_summary(c, queries.resolve_result_id(c, result_id))
            view = cumulative_graph.project_graph(c, summary, limit)
            cited = {
                (ref.source_type, ref.source_id)
                for group in (
                    view.events,
                    view.entities,
                    view.relations,
                    view.changes,
                    view.open_items,
                )
                for item in group
                for ref in item.sources
            }
            return dataclasses.replace(view, sources=sources.excerpts(c, cited))

    def result_conversations(self, result_id: str, *, cumulative: bool = False) -> list[str]:
        """The conversations a result's events come from (``cumulative``: of every result
        of its scope up to it), sorted."""
        with self._snapshot() as c:
            summary = queries.result_summary(c, queries.resolve_result_id(c, result_id))
            merged = cumulative_graph.merged_results(c, summary) if cumulative else [summary]
            return graph_findings.event_conversations(c, [r.result_id for r in merged])

    def source_times(self, refs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], datetime]:
        """When each (source_type, source_id) happened, for those that exist and say."""
        with self._snapshot() as c:
            return graph_findings.source_times(c, refs)

    def stories(self, target: str) -> list[StoryLineView]:
        """Story lines of a project (name or id) or review scope, most recently updated first."""
        with self._snapshot() as c:
            return queries.stories(c, target)

    def source_text(self, source_type: str, source_id: str) -> SourceText:
        """The full text of one source."""
        with self._snapshot() as c:
            return sources.source_text(c, source_type, source_id)

    def source_context(
        self, source_type: str, source_id: str, before: int = 3, after: int = 3
    ) -> SourceContext:
        """A source with its neighbours in the conversation."""
        with self._snapshot() as c:
            return sources.source_context(c, source_type, source_id, before, after)

    def result_object(self, result_id: str, object_ref: str) -> ResultObject:
        """One entity, relation, change or event a result published (id or unique prefix),
        with the sources that result cited for it and a person's edits of it."""
        with self._snapshot() as c:
            full_id = queries.resolve_result_id(c, result_id)
            return details.result_object(c, full_id, object_ref)

    def conversation_sources(
        self, conversation_id: str, *, limit: int = 50, offset: int = 0
    ) -> SourcePage:
        """A page of a conversation's sources (messages, tool calls, task events) in
        reading order, each with its source id and full text."""
        with self._snapshot() as c:
            return details.conversation_sources(c, conversation_id, limit, offset)

    def attention(self, result_id: str) -> list[AttentionBucket]:
        """Messages per hour over a result's scope and time range, computed now (REV-11)."""
        with self._snapshot() as c:
            summary = queries.result_summary(c, queries.resolve_result_id(c, result_id))
            return sources.attention(c, summary)

    def entity_candidates(
        self,
        project_id: str | None,
        limit: int = 100,
        cross_project: bool = False,
        states: Sequence[str] | None = None,
    ) -> list[EntityCandidate]:
        """Entities offered to the model as ``known_N``, most recently updated first (REV-3);
        ``states`` narrows them (e.g. the ones a person confirmed, REV-7b background)."""
        with self._snapshot() as c:
            return queries.entity_candidates(c, project_id, limit, cross_project, states)

    def story_line_candidates(
        self, project_id: str | None, limit: int = 40
    ) -> list[StoryLineCandidate]:
        """Story lines offered to the merge as ``line_N``, most recently updated first."""
        with self._snapshot() as c:
            return queries.story_line_candidates(c, project_id, limit)

    def entity(self, entity_id: str) -> EntityDetail:
        """One entity (id or unique prefix) with everything that mentions it."""
        with self._snapshot() as c:
            _, full_id = edits.resolve_object(c, entity_id, "entity")
            return queries.entity_detail(c, full_id)


class GraphRepository(GraphReads):
    """``GraphReads`` and the writes (publish and a person's edits), each one transaction."""

    def publish_result(
        self,
        draft: ResultDraft,
        run_status: str,
        *,
        also: Callable[[Connection], object] | None = None,
    ) -> PublishOutcome:
        """Publish a review's result and graph in one transaction (idempotent per run).

        ``also`` is called with the transaction's connection after the graph is written,
        when this call published it: the search index's documents of the graph go in the
        same transaction, so a result is never published without them.

        Raises ``NotFoundError`` when the run does not exist, when a story line the merge
        chose is gone, or when a fact points at an entity or event nobody holds; nothing
        is written then.
        """
        with self._write() as c:
            outcome = publish(c, draft, run_status, utcnow())
            if also is not None and outcome.published:
                also(c)
            return outcome

    def confirm(self, object_type: str, object_id: str) -> GraphEdit:
        """A person confirms an entity, relation or entity change (id or unique prefix)."""
        with self._write() as c:
            return edits.edit(c, object_type, object_id, "confirm", {}, utcnow())

    def revise(
        self,
        object_type: str,
        object_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        reason: str | None = None,
        kind: str | None = None,
    ) -> GraphEdit:
        """A person rewrites an object's fields; automatic runs leave it alone from then on."""
        given = {"name": name, "description": description, "reason": reason, "kind": kind}
        changes = {key: value for key, value in given.items() if value is not None}
        with self._write() as c:
            return edits.edit(c, object_type, object_id, "revise", changes, utcnow())

    def remove(self, object_type: str, object_id: str) -> GraphEdit:
        """A person removes an object (a relation is revoked and never recreated)."""
        with self._write() as c:
            return edits.edit(c, object_type, object_id, "remove", {}, utcnow())

    def dismiss_needs_review(self, item_id: int) -> NeedsReviewItem:
        """Mark a difference as seen; the same proposal is not raised again."""
        with self._write() as c:
            return edits.dismiss(c, item_id)
