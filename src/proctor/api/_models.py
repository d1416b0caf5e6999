"""The API's wire documents: pages and lists around the store's own view types."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.api._overview_models import Page
from proctor.findings import Finding
from proctor.graph.views import GraphEdit, ResultSummary, StoryLineView
from proctor.store import ConversationSummary


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
