"""The story graph as the store offers it (SPEC REV-4, REV-8 … REV-12).

``GraphRecords`` is what the review pipeline, the CLI and later the API and MCP server
call: one publish transaction per review, a person's edits, and reads that each see one
consistent snapshot of the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from sqlalchemy.engine import Connection

from proctor.graph import EntityCandidate, ResultDraft, StoryLineCandidate
from proctor.graph.views import (
    GRAPH_LIMIT,
    AttentionBucket,
    EntityDetail,
    GraphEdit,
    GraphView,
    NeedsReviewItem,
    PublishOutcome,
    ResultSummary,
    SourceContext,
    SourceText,
    StoryLineView,
)


class GraphRecords(Protocol):
    """Publish, edit and read the story graph; every write is one transaction."""

    def publish_result(
        self,
        draft: ResultDraft,
        run_status: str,
        *,
        also: Callable[[Connection], object] | None = None,
    ) -> PublishOutcome:
        """Publish a review's result and graph in one transaction (idempotent per run);
        ``also`` writes more in it (the search index's documents of the graph)."""
        ...

    def confirm(self, object_type: str, object_id: str) -> GraphEdit:
        """A person confirms an entity, relation or entity change (id or unique prefix)."""
        ...

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
        ...

    def remove(self, object_type: str, object_id: str) -> GraphEdit:
        """A person removes an object (a relation is revoked and never recreated)."""
        ...

    def resolve_graph_object(self, ref: str, object_type: str | None = None) -> tuple[str, str]:
        """The (type, id) an id or unique prefix names among editable objects."""
        ...

    def needs_review_items(self, status: str | None = "open") -> list[NeedsReviewItem]:
        """Automatic proposals that differ from a person's edit (None: every status)."""
        ...

    def dismiss_needs_review(self, item_id: int) -> NeedsReviewItem:
        """Mark a difference as seen; the same proposal is not raised again."""
        ...

    def overview(self, target: str | None = None, limit: int = 20) -> list[ResultSummary]:
        """Results for a scope key or project (all when None), newest first."""
        ...

    def resolve_result_id(self, ref: str) -> str:
        """A result id from a full id or unique prefix."""
        ...

    def result(self, result_id: str) -> ResultSummary:
        """One result (id or unique prefix)."""
        ...

    def latest_result(self, scope_key: str) -> ResultSummary | None:
        """The newest result of exactly this scope."""
        ...

    def graph(
        self,
        result_id: str,
        story_line_id: str | None = None,
        *,
        as_published: bool = False,
        limit: int | None = GRAPH_LIMIT,
        offset: int = 0,
    ) -> GraphView:
        """What one result published (or one story line of it), at most ``limit`` events."""
        ...

    def project_graph(self, result_id: str, *, limit: int | None = GRAPH_LIMIT) -> GraphView:
        """A result's scope as of that result: its results up to it, merged."""
        ...

    def stories(self, target: str) -> list[StoryLineView]:
        """Story lines of a project or review scope."""
        ...

    def source_text(self, source_type: str, source_id: str) -> SourceText:
        """The full text of one source."""
        ...

    def source_context(
        self, source_type: str, source_id: str, before: int = 3, after: int = 3
    ) -> SourceContext:
        """A source with its neighbours in the conversation."""
        ...

    def attention(self, result_id: str) -> list[AttentionBucket]:
        """Messages per hour over a result's scope and time range, computed now."""
        ...

    def entity_candidates(
        self,
        project_id: str | None,
        limit: int = 100,
        cross_project: bool = False,
        states: Sequence[str] | None = None,
    ) -> list[EntityCandidate]:
        """Entities offered to the model as ``known_N``, most recently updated first."""
        ...

    def story_line_candidates(
        self, project_id: str | None, limit: int = 40
    ) -> list[StoryLineCandidate]:
        """Story lines offered to the merge as ``line_N``, most recently updated first."""
        ...

    def entity(self, entity_id: str) -> EntityDetail:
        """One entity (id or unique prefix) with everything that mentions it."""
        ...
