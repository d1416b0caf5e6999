"""Wire documents of sources and graph reads: source pages, attention, a result's overview."""

from __future__ import annotations

from datetime import datetime

from proctor.api._base_models import WireModel
from proctor.graph.views import GraphTotals, ResultSummary, SourceText


class ConversationSources(WireModel):
    """A page of one conversation's sources in reading order, each with its full text."""

    conversation_id: str
    limit: int
    offset: int
    total: int
    """How many sources the conversation has."""
    sources: list[SourceText]
    """Messages, each followed by its tool calls; task events placed by time."""


class AttentionHour(WireModel):
    """Messages in one hour (UTC) of a result's scope and range."""

    hour_start: datetime
    messages: int


class Attention(WireModel):
    """Messages per hour over a result's scope and time range, computed now (REV-11)."""

    result_id: str
    hours: list[AttentionHour]
    """Hours with at least one message, oldest first."""


class ResultOverview(WireModel):
    """One result at a glance: its summary, coverage and how much its graph holds."""

    result: ResultSummary
    totals: GraphTotals
    """Events, entities, relations, changes, open items, story lines and experiences."""
