"""Results, the story graph, stories and a person's edits (confirm / revise / remove)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import EditResponse, ResultPage, Revision, StoryList
from proctor.api._source_models import Attention, AttentionHour, ResultOverview
from proctor.graph.views import GraphView, ResultObject, ResultSummary

router = APIRouter(tags=["graph"])

ObjectType = Literal["entity", "relation", "entity_change"]
"""The graph objects a person may edit."""


@router.get("/results")
def list_results(
    store: StoreDep,
    target: Annotated[
        str | None, Query(description="A project name or review scope key (all when absent).")
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ResultPage:
    """Published results, newest first."""
    results = store.overview(target, limit=limit + offset)[offset:]
    return ResultPage(limit=limit, offset=offset, results=results)


@router.get("/results/{result_ref}")
def show_result(store: StoreDep, result_ref: str) -> ResultSummary:
    """One result by id or unique prefix."""
    return store.result(result_ref)


@router.get("/results/{result_ref}/overview")
def result_overview(store: StoreDep, result_ref: str) -> ResultOverview:
    """One result's summary, coverage and the size of its graph."""
    view = store.graph(store.resolve_result_id(result_ref), limit=1)
    return ResultOverview(result=view.result, totals=view.totals)


@router.get("/results/{result_ref}/attention")
def result_attention(store: StoreDep, result_ref: str) -> Attention:
    """Messages per hour over the result's scope and time range (hours with none left out)."""
    result_id = store.resolve_result_id(result_ref)
    hours = [
        AttentionHour(hour_start=b.hour_start, messages=b.messages)
        for b in store.attention(result_id)
    ]
    return Attention(result_id=result_id, hours=hours)


@router.get("/results/{result_ref}/objects/{object_ref}")
def result_object(store: StoreDep, result_ref: str, object_ref: str) -> ResultObject:
    """One entity, relation, change or event the result published (id or unique prefix),
    with the sources the result cited for it and a person's edits."""
    return store.result_object(result_ref, object_ref)


@router.get("/results/{result_ref}/graph")
def result_graph(
    store: StoreDep,
    result_ref: str,
    story_line: Annotated[str | None, Query(description="Only this story line.")] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many events.")] = 100,
    offset: Offset = 0,
    as_published: Annotated[
        bool,
        Query(
            description="Read the result's snapshot: names, descriptions, states and reasons "
            "as the result said them when it was published, without later edits (REV-8)."
        ),
    ] = False,
) -> GraphView:
    """What one result published, the newest ``limit`` events after skipping ``offset``."""
    result_id = store.resolve_result_id(result_ref)
    return store.graph(result_id, story_line, as_published=as_published, limit=limit, offset=offset)


@router.get("/stories")
def stories(
    store: StoreDep,
    target: Annotated[str, Query(min_length=1, description="A project name or scope key.")],
) -> StoryList:
    """Story lines of a project or review scope."""
    return StoryList(stories=store.stories(target))


@router.post("/graph/{object_type}/{object_ref}/confirm")
def confirm(store: StoreDep, object_type: ObjectType, object_ref: str) -> EditResponse:
    """A person confirms an entity, relation or entity change."""
    return EditResponse(edit=store.confirm(object_type, object_ref))


@router.post("/graph/{object_type}/{object_ref}/revise")
def revise(
    store: StoreDep, object_type: ObjectType, object_ref: str, revision: Revision
) -> EditResponse:
    """A person rewrites an object's fields; automatic runs leave it alone from then on."""
    edit = store.revise(
        object_type,
        object_ref,
        name=revision.name,
        description=revision.description,
        reason=revision.reason,
        kind=revision.kind,
    )
    return EditResponse(edit=edit)


@router.post("/graph/{object_type}/{object_ref}/remove")
def remove(store: StoreDep, object_type: ObjectType, object_ref: str) -> EditResponse:
    """A person removes an object (a relation is revoked and never recreated)."""
    return EditResponse(edit=store.remove(object_type, object_ref))
