"""The story graph as readers see it: results, one result's graph, sources, attention.

These are read-side values (REV-8 … REV-12). ``graph(result_id)`` returns a
:class:`GraphView` holding only the objects that result published; a result's stored
snapshot has the same shape, so history reads back exactly what a result said then. A
view is bounded: it shows at most ``GRAPH_LIMIT`` events (the newest) unless asked for
more, and its ``totals`` say how much the whole result or story line holds.
Kinds and states are plain strings here: a reader must never fail on a value an older
or newer version of Proctor wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from proctor.graph._facts import (
    ChangeKind,
    Coverage,
    EditAction,
    EntityKind,
    EventKind,
    EventOutcome,
    GraphObjectType,
    Layer,
    NeedsReviewStatus,
    ObjectState,
    OpenItemStatus,
    RelationState,
    RelationType,
    SourceRef,
)
from proctor.graph._manifest_policy import ReviewTrigger

GRAPH_LIMIT = 500
"""Events one ``graph()`` view shows unless asked otherwise: the newest of the view."""

SOURCES_PER_OBJECT = 10
"""References a graph view keeps per object (a file read thousands of times cites thousands
of sources); ``source_count`` says how many there are."""


@dataclass(frozen=True, slots=True)
class PublishOutcome:
    """What one publish transaction wrote (or, for a run already published, had written)."""

    result_id: str
    run_id: str
    published: bool
    """False when the run already had a result: nothing was written this time."""
    entities: int = 0
    """Entities the result lists (new, updated, or protected and left alone)."""
    entities_new: int = 0
    events: int = 0
    relations: int = 0
    changes: int = 0
    open_items: int = 0
    resolved_open_items: int = 0
    story_lines: int = 0
    experiences: int = 0
    needs_review: int = 0
    """Automatic proposals that differed from a user's edit: recorded, not applied (REV-4)."""
    revoked_relations_skipped: int = 0
    """Relations a user revoked that this review proposed again: never recreated."""
    checkpoints: int = 0


@dataclass(frozen=True, slots=True)
class ResultSummary:
    """One published review, as ``overview`` lists it."""

    result_id: str
    run_id: str
    scope_key: str
    project_id: str | None
    project_name: str | None
    """None for a global result (it spans every project)."""
    time_from: datetime | None
    time_to: datetime | None
    trigger: ReviewTrigger
    summary: str
    change_digest: str
    coverage: Coverage
    complete: bool
    created_at: datetime

    @property
    def is_global(self) -> bool:
        """A result over every project, shown as global in any project's overview."""
        return self.project_id is None

    @property
    def scope_label(self) -> str:
        """``global`` or the project's name (its id when the project is gone)."""
        if self.project_id is None:
            return "global"
        return self.project_name or self.project_id


@dataclass(frozen=True, slots=True)
class EntityView:
    """An entity with its current (or, in a snapshot, then) name, description and state."""

    entity_id: str
    project_id: str | None
    kind: EntityKind
    name: str
    description: str
    identity_key: str | None
    layer: Layer
    state: ObjectState
    """automatic | confirmed | revised | removed (REV-4)."""
    sources: tuple[SourceRef, ...] = ()
    updated_at: datetime | None = None
    source_count: int = 0
    """How many sources it cites (in a result's graph: in that result); a graph view keeps
    the first ``SOURCES_PER_OBJECT`` of them in ``sources``."""


@dataclass(frozen=True, slots=True)
class EventView:
    """Something that happened, with the entities involved and the story lines it is in."""

    event_id: str
    project_id: str | None
    conversation_id: str | None
    kind: EventKind
    title: str
    summary: str
    occurred_at: datetime | None
    outcome: EventOutcome
    layer: Layer
    entity_ids: tuple[str, ...] = ()
    story_line_ids: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    source_count: int = 0
    """How many sources it cites (in a result's graph: in that result); a graph view keeps
    the first ``SOURCES_PER_OBJECT`` of them in ``sources``."""


@dataclass(frozen=True, slots=True)
class RelationView:
    """A typed link between two entities, with its reason and state."""

    relation_id: str
    project_id: str | None
    from_entity_id: str
    to_entity_id: str
    type: RelationType
    reason: str
    layer: Layer
    state: RelationState
    """automatic | confirmed | revised | revoked (REV-4)."""
    sources: tuple[SourceRef, ...] = ()
    source_count: int = 0
    """How many sources it cites (in a result's graph: in that result); a graph view keeps
    the first ``SOURCES_PER_OBJECT`` of them in ``sources``."""


@dataclass(frozen=True, slots=True)
class EntityChangeView:
    """A change a review saw happen to an entity."""

    change_id: str
    entity_id: str
    result_id: str
    kind: ChangeKind
    description: str
    layer: Layer
    state: ObjectState
    sources: tuple[SourceRef, ...] = ()
    source_count: int = 0
    """How many sources it cites (in a result's graph: in that result); a graph view keeps
    the first ``SOURCES_PER_OBJECT`` of them in ``sources``."""


@dataclass(frozen=True, slots=True)
class OpenItemView:
    """Something left unresolved (or, once resolved, which result saw it resolved)."""

    key: str
    project_id: str | None
    title: str
    detail: str
    status: OpenItemStatus
    layer: Layer
    entity_ids: tuple[str, ...] = ()
    resolved_result_id: str | None = None
    sources: tuple[SourceRef, ...] = ()
    source_count: int = 0
    """How many sources it cites (in a result's graph: in that result); a graph view keeps
    the first ``SOURCES_PER_OBJECT`` of them in ``sources``."""


@dataclass(frozen=True, slots=True)
class StoryLineView:
    """A thread of events; ``parent_id`` makes it a sub-thread (REV-9)."""

    story_line_id: str
    project_id: str | None
    parent_id: str | None
    title: str
    summary: str
    event_ids: tuple[str, ...] = ()
    """Its events, oldest first; in a bounded graph view only the ones the view shows."""
    first_at: datetime | None = None
    last_at: datetime | None = None
    updated_at: datetime | None = None
    event_count: int = 0
    """How many events the line holds (in a result's view: in that result), shown or not."""


@dataclass(frozen=True, slots=True)
class ExperienceView:
    """A lesson and the events that formed it (REV-9)."""

    experience_id: str
    project_id: str | None
    title: str
    lesson: str
    event_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SourceExcerpt:
    """A cited source, titled and shortened for display; ``exists`` is False once deleted."""

    source_type: str
    source_id: str
    exists: bool
    conversation_id: str | None = None
    conversation_title: str | None = None
    title: str = ""
    """What the source is: ``user message``, ``tool Bash``, ``task event turn_complete`` …"""
    excerpt: str = ""
    occurred_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class GraphTotals:
    """How many objects a whole view holds (a result, or one story line of it), shown or not."""

    events: int = 0
    entities: int = 0
    relations: int = 0
    changes: int = 0
    open_items: int = 0
    story_lines: int = 0
    experiences: int = 0


@dataclass(frozen=True, slots=True)
class GraphView:
    """What one result published, optionally narrowed to one story line, and bounded.

    The view shows at most ``limit`` events: the newest ones, after skipping the
    ``offset`` newest (``offset=limit`` is the page before). While every event fits,
    the view holds everything the result (or story line) holds. Once it does not
    (``truncated``), it holds the shown events and the entities, relations, changes,
    open items, story lines and experiences they involve; ``totals`` counts them all.
    """

    result: ResultSummary
    story_line_id: str | None
    as_published: bool
    """True: names, descriptions, states and reasons as the result said them then (REV-8)."""
    events: tuple[EventView, ...] = ()
    """Oldest first (events without a time last)."""
    entities: tuple[EntityView, ...] = ()
    relations: tuple[RelationView, ...] = ()
    changes: tuple[EntityChangeView, ...] = ()
    open_items: tuple[OpenItemView, ...] = ()
    story_lines: tuple[StoryLineView, ...] = ()
    experiences: tuple[ExperienceView, ...] = ()
    sources: Mapping[tuple[str, str], SourceExcerpt] = field(default_factory=dict)
    """Every source the shown objects cite, by (source_type, source_id), read now (so
    deletions show)."""
    totals: GraphTotals = field(default_factory=GraphTotals)
    """What the whole view holds, whatever ``limit`` and ``offset`` left out."""
    limit: int | None = None
    """At most this many events are shown (None: every one)."""
    offset: int = 0
    """How many of the newest events were skipped before the shown ones."""

    @property
    def truncated(self) -> bool:
        """Some of the view's events, and what only they involve, are not shown."""
        return len(self.events) < self.totals.events

    def source(self, ref: SourceRef) -> SourceExcerpt | None:
        """The excerpt of a cited source."""
        return self.sources.get((ref.source_type, ref.source_id))


@dataclass(frozen=True, slots=True)
class SourceText:
    """The full text of one source, on demand (REV-12 ``source``)."""

    source_type: str
    source_id: str
    conversation_id: str
    title: str
    text: str
    """Message text; a tool call's arguments and result; a task event's text."""
    occurred_at: datetime | None


@dataclass(frozen=True, slots=True)
class SourceContext:
    """A source with its neighbours in the conversation (REV-12 ``source_context``)."""

    focus: SourceText
    before: tuple[SourceText, ...] = ()
    after: tuple[SourceText, ...] = ()


class AttentionBucket(NamedTuple):
    """Messages in one hour of a result's scope and time range (REV-11)."""

    hour_start: datetime
    messages: int


@dataclass(frozen=True, slots=True)
class NeedsReviewItem:
    """An automatic proposal that differs from a user's edit: shown, never applied."""

    item_id: int
    object_type: GraphObjectType
    object_id: str
    result_id: str
    reason: str
    proposed: Mapping[str, Any]
    current: Mapping[str, Any] | None
    """The object's fields now (None when the object is gone)."""
    status: NeedsReviewStatus
    created_at: datetime


@dataclass(frozen=True, slots=True)
class GraphEdit:
    """One confirm / revise / remove a person made, with what it replaced."""

    edit_id: int
    object_type: GraphObjectType
    object_id: str
    action: EditAction
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EntityDetail:
    """One entity with everything that mentions it."""

    entity: EntityView
    events: tuple[EventView, ...] = ()
    relations: tuple[RelationView, ...] = ()
    changes: tuple[EntityChangeView, ...] = ()
    needs_review: tuple[NeedsReviewItem, ...] = ()
    edits: tuple[GraphEdit, ...] = ()


@dataclass(frozen=True, slots=True)
class ResultObject:
    """One object a result published (entity, relation, entity change or event) with the
    sources that result cited for it, excerpted."""

    result_id: str
    object_type: str
    """``entity``, ``relation``, ``entity_change`` or ``event``."""
    object_id: str
    entity: EntityView | None = None
    relation: RelationView | None = None
    change: EntityChangeView | None = None
    event: EventView | None = None
    sources: tuple[SourceExcerpt, ...] = ()
    """The cited sources (at most ``SOURCES_PER_OBJECT``), in the order the result wrote them."""
    source_count: int = 0
    """How many sources the result cited for the object in all."""
    edits: tuple[GraphEdit, ...] = ()
    """A person's confirm / revise / remove of the object, oldest first."""


@dataclass(frozen=True, slots=True)
class SourcePage:
    """A page of one conversation's sources in reading order, with their full text."""

    conversation_id: str
    total: int
    """How many sources the conversation has."""
    sources: tuple[SourceText, ...] = ()
