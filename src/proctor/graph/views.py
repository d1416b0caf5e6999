"""The story graph's read-side values (results, graph views, sources, attention, edits).

Import from here: ``from proctor.graph.views import GraphView, PublishOutcome``.
"""

from proctor.graph._views import (
    AttentionBucket,
    EntityChangeView,
    EntityDetail,
    EntityView,
    EventView,
    ExperienceView,
    GraphEdit,
    GraphView,
    NeedsReviewItem,
    OpenItemView,
    PublishOutcome,
    RelationView,
    ResultSummary,
    SourceContext,
    SourceExcerpt,
    SourceText,
    StoryLineView,
)

__all__ = [
    "AttentionBucket",
    "EntityChangeView",
    "EntityDetail",
    "EntityView",
    "EventView",
    "ExperienceView",
    "GraphEdit",
    "GraphView",
    "NeedsReviewItem",
    "OpenItemView",
    "PublishOutcome",
    "RelationView",
    "ResultSummary",
    "SourceContext",
    "SourceExcerpt",
    "SourceText",
    "StoryLineView",
]
