"""The story graph's read-side values (results, graph views, sources, attention, edits).

Import from here: ``from proctor.graph.views import GraphView, PublishOutcome``.
"""

from proctor.graph._views import (
    GRAPH_LIMIT,
    SOURCES_PER_OBJECT,
    AttentionBucket,
    EntityChangeView,
    EntityDetail,
    EntityView,
    EventView,
    ExperienceView,
    GraphEdit,
    GraphTotals,
    GraphView,
    NeedsReviewItem,
    OpenItemView,
    PublishOutcome,
    RelationView,
    ResultObject,
    ResultSummary,
    SourceContext,
    SourceExcerpt,
    SourcePage,
    SourceText,
    StoryLineView,
)

__all__ = [
    "GRAPH_LIMIT",
    "SOURCES_PER_OBJECT",
    "AttentionBucket",
    "EntityChangeView",
    "EntityDetail",
    "EntityView",
    "EventView",
    "ExperienceView",
    "GraphEdit",
    "GraphTotals",
    "GraphView",
    "NeedsReviewItem",
    "OpenItemView",
    "PublishOutcome",
    "RelationView",
    "ResultObject",
    "ResultSummary",
    "SourceContext",
    "SourceExcerpt",
    "SourcePage",
    "SourceText",
    "StoryLineView",
]
