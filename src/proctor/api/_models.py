"""The API's wire documents: pages and lists around the store's own view types."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.api._overview_models import Page
from proctor.findings import Finding
from proctor.graph.views import GraphEdit, ResultSummary, StoryLineView
from proctor.search import SearchHit
from proctor.store import ConversationSummary

if TYPE_CHECKING:
    from proctor.search import IndexerState, IndexStatus


class ConversationPage(Page):
    """A page of conversations, newest first."""

    total: int
    """How many conversations match."""
    conversations: list[ConversationSummary]
    """The page."""


class FindingPage(Page):
    """A page of findings."""

    total: int
    """How many findings match."""
    findings: list[Finding]
    """The page."""


class ResultPage(Page):
    """A page of published results, newest first."""

    results: list[ResultSummary]
    """The page."""


class StoryList(WireModel):
    """Story lines of a project or review scope."""

    stories: list[StoryLineView]
    """Every story line."""


class IndexState(WireModel):
    """How complete the search index was: whether hits may miss something."""

    documents: int
    """Documents in the index (messages, tool calls, graph objects)."""
    embedded: int | None
    """Documents with a sentence embedding; null when search runs on full text only."""
    stale: bool
    """True when hits may be incomplete: new sources not indexed yet, or documents
    without an embedding (ranked by full text only)."""
    full_text_current: bool
    """False when messages or tool calls changed since the last full-text pass."""
    indexing: bool
    """The server's background indexer is bringing the index up to date."""
    note: str | None
    """What the hits may miss and what brings the index up to date, when they may."""

    @classmethod
    def of(cls, status: IndexStatus) -> IndexState:
        """The wire form of an index status."""
        return cls(
            documents=status.documents,
            embedded=status.embedded,
            stale=status.stale,
            full_text_current=status.full_text_current,
            indexing=status.indexing,
            note=status.note(),
        )


class IndexerProgress(WireModel):
    """What the server's background indexer has done since it started."""

    phase: str
    """``starting``, ``full_text``, ``embedding``, ``idle`` or ``stopped``."""
    passes: int
    """Full-text passes finished."""
    indexed: int
    """Documents (re)written for full text."""
    embedded: int
    """Documents embedded."""
    remaining: int | None
    """Documents still without an embedding after its last slice (null: not known yet)."""
    last_pass_at: datetime | None
    """When its last full-text pass ended."""
    error: str | None
    """Why its last pass failed, if it did."""

    @classmethod
    def of(cls, state: IndexerState) -> IndexerProgress:
        """The wire form of the indexer's state."""
        return cls(**dataclasses.asdict(state))


class SearchIndexReport(WireModel):
    """The search index and the server's background indexer."""

    index: IndexState
    """The index as it is in the database now."""
    indexer: IndexerProgress | None
    """The background indexer (null when this server runs none)."""


class SearchResponse(WireModel):
    """Hits, best first, how they were ranked, and how complete the index was."""

    query: str
    """The query as asked."""
    mode: str
    """``hybrid`` or ``full_text``."""
    note: str | None
    """Why the search ran on full text only, when it did."""
    index: IndexState
    """The index searched; ``stale`` says when the hits may be incomplete."""
    hits: list[SearchHit]
    """Ranked documents."""


FindingAction = Literal["ack", "resolve", "dismiss", "false_positive", "reopen"]
"""What a person does to a finding."""


class StatusChange(BaseModel):
    """Move a finding along its lifecycle."""

    model_config = ConfigDict(extra="forbid")

    action: FindingAction
    """``ack``, ``resolve``, ``dismiss``, ``false_positive`` or ``reopen``."""


class DigestedChange(BaseModel):
    """Collapse a finding in lists (digested) or expand it again."""

    model_config = ConfigDict(extra="forbid")

    digested: bool
    """True: digested (collapsed); false: clear the mark."""


class Revision(BaseModel):
    """A person's rewrite of a graph object's fields (only the fields given change)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=500)
    """The new name (entities)."""
    description: str | None = Field(default=None, max_length=10_000)
    """The new description."""
    reason: str | None = Field(default=None, max_length=2_000)
    """Why (relations, entity changes)."""
    kind: str | None = Field(default=None, min_length=1, max_length=100)
    """The new kind."""


class EditResponse(WireModel):
    """The edit a person made, with what it replaced."""

    edit: GraphEdit
    """The recorded edit."""
