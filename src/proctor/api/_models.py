"""The API's wire documents: pages and lists around the store's own view types."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from proctor.findings import Finding
from proctor.graph.views import GraphEdit, ResultSummary, StoryLineView
from proctor.search import SearchHit
from proctor.store import ConversationSummary, ProjectSummary


class Health(BaseModel):
    """The server answers."""

    status: Literal["ok"] = "ok"
    """Always ``ok``."""
    version: str
    """Proctor's version."""


class Page(BaseModel):
    """Where a page sits in its list."""

    limit: int
    """The page size asked for."""
    offset: int
    """How many items were skipped."""


class ProjectList(BaseModel):
    """Every project."""

    projects: list[ProjectSummary]
    """Projects with their conversation counts."""


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


class StoryList(BaseModel):
    """Story lines of a project or review scope."""

    stories: list[StoryLineView]
    """Every story line."""


class SearchResponse(BaseModel):
    """Hits, best first, and how they were ranked."""

    query: str
    """The query as asked."""
    mode: str
    """``hybrid`` or ``full_text``."""
    note: str | None
    """Why the search ran on full text only, when it did."""
    hits: list[SearchHit]
    """Ranked documents."""


FindingAction = Literal["ack", "resolve", "dismiss", "false_positive", "reopen"]
"""What a person does to a finding."""


class StatusChange(BaseModel):
    """Move a finding along its lifecycle."""

    model_config = {"extra": "forbid"}

    action: FindingAction
    """``ack``, ``resolve``, ``dismiss``, ``false_positive`` or ``reopen``."""


class DigestedChange(BaseModel):
    """Collapse a finding in lists (digested) or expand it again."""

    model_config = {"extra": "forbid"}

    digested: bool
    """True: digested (collapsed); false: clear the mark."""


class Revision(BaseModel):
    """A person's rewrite of a graph object's fields (only the fields given change)."""

    model_config = {"extra": "forbid"}

    name: str | None = Field(default=None, min_length=1, max_length=500)
    """The new name (entities)."""
    description: str | None = Field(default=None, max_length=10_000)
    """The new description."""
    reason: str | None = Field(default=None, max_length=2_000)
    """Why (relations, entity changes)."""
    kind: str | None = Field(default=None, min_length=1, max_length=100)
    """The new kind."""


class EditResponse(BaseModel):
    """The edit a person made, with what it replaced."""

    edit: GraphEdit
    """The recorded edit."""
