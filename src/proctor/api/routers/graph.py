"""Results, the story graph, stories and a person's edits (confirm / revise / remove)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.api._models import EditResponse, ResultPage, Revision, StoryList
from proctor.api._source_models import Attention, AttentionHour, ResultOverview
from proctor.errors import ConfigError
from proctor.findings import Severity, Status
from proctor.graph import GraphObjectType
from proctor.graph.views import GraphView, ResultObject, ResultSummary
from proctor.store import FindingFilter

router = APIRouter(tags=["graph"])

ObjectType = GraphObjectType
"""The graph objects a person may edit."""


@router.get("/results")
def list_results(
    store: ReaderDep,
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
def show_result(store: ReaderDep, result_ref: str) -> ResultSummary:
    """One result by id or unique prefix."""
    return store.result(result_ref)


@router.get("/results/{result_ref}/overview")
def result_overview(store: ReaderDep, result_ref: str) -> ResultOverview:
    """One result's summary, coverage and the size of its graph."""
    view = store.graph(store.resolve_result_id(result_ref), limit=1)
    return ResultOverview(result=view.result, totals=view.totals)


@router.get("/results/{result_ref}/attention")
def result_attention(store: ReaderDep, result_ref: str) -> Attention:
    """Messages per hour over the result's scope and time range (hours with none left out)."""
    result_id = store.resolve_result_id(result_ref)
    hours = [
        AttentionHour(hour_start=b.hour_start, messages=b.messages)
        for b in store.attention(result_id)
    ]
    return Attention(result_id=result_id, hours=hours)


@router.get("/results/{result_ref}/objects/{object_ref}")
def result_object(store: ReaderDep, result_ref: str, object_ref: str) -> ResultObject:
    """One entity, relation, change or event the result published (id or unique prefix),
    with the sources the result cited for it and a person's edits."""
    return store.result_object(result_ref, object_ref)


@router.get("/results/{result_ref}/graph")
def result_graph(
    store: ReaderDep,
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
    cumulative: Annotated[
        bool,
        Query(
            description="The scope's graph as of this result: every result of its scope "
            "published up to it, merged (the newest ``limit`` events; not with story_line, "
            "offset or as_published)."
        ),
    ] = False,
    excerpts: Annotated[
        bool,
        Query(
            description="Each cited source with its excerpt (the default). false: every "
            "``excerpt`` is empty, the rest of each source (title, time, whether it still "
            "exists) is kept; about a third of a large answer, for readers that show "
            "excerpts later (the web UI's timeline) or not at all."
        ),
    ] = True,
) -> GraphView:
    """What one result published, the newest ``limit`` events after skipping ``offset``;
    with ``cumulative``, what every result of its scope up to it published."""
    result_id = store.resolve_result_id(result_ref)
    if cumulative:
        if story_line is not None or offset or as_published:
            raise ConfigError(
                "cumulative=true reads the whole scope's newest events: leave out "
                "story_line, offset and as_published"
            )
        view = store.project_graph(result_id, limit=limit)
    else:
        view = store.graph(
            result_id, story_line, as_published=as_published, limit=limit, offset=offset
        )
    return view if excerpts else without_excerpts(view)


def without_excerpts(view: GraphView) -> GraphView:
    """``view`` with every cited source's excerpt left empty (the rest of it kept)."""
    sources = {key: replace(source, excerpt="") for key, source in view.sources.items()}
    return replace(view, sources=sources)


class TimelineFinding(BaseModel):
    """A finding as the story graph's timeline places it: at its evidence time."""

    finding_id: str
    title: str
    rule: str
    severity: Severity
    status: Status
    conversation_id: str
    at: datetime | None
    """When the earliest source it cites happened (None: no cited source has a time)."""


class TimelineFindings(BaseModel):
    """The most severe findings about the conversations a result's events come from."""

    result_id: str
    total: int
    """How many findings those conversations have (the list holds at most ``limit``)."""
    findings: list[TimelineFinding]


@router.get("/results/{result_ref}/findings")
def result_findings(
    store: ReaderDep,
    result_ref: str,
    cumulative: Annotated[
        bool, Query(description="Of every result of its scope up to this one (as the graph).")
    ] = False,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many.")] = 300,
) -> TimelineFindings:
    """Findings about the conversations the result's events come from, most severe first,
    each at the time of the earliest source it cites."""
    result_id = store.resolve_result_id(result_ref)
    conversations = store.result_conversations(result_id, cumulative=cumulative)
    if not conversations:
        return TimelineFindings(result_id=result_id, total=0, findings=[])
    page = store.findings_page(
        FindingFilter(conversation_ids=conversations), sort="severity", limit=limit
    )
    refs = {
        (ev.source_type, ev.source_id)
        for finding in page.findings
        for ev in finding.evidence
        if ev.source_type != "conversation"
    }
    times = store.source_times(refs)
    findings = []
    for finding in page.findings:
        cited = [
            times[(ev.source_type, ev.source_id)]
            for ev in finding.evidence
            if (ev.source_type, ev.source_id) in times
        ]
        findings.append(
            TimelineFinding(
                finding_id=finding.finding_id or finding.key,
                title=finding.title,
                rule=finding.rule,
                severity=finding.severity,
                status=finding.status,
                conversation_id=finding.conversation_id,
                at=min(cited, default=None),
            )
        )
    return TimelineFindings(result_id=result_id, total=page.total, findings=findings)


@router.get("/stories")
def stories(
    store: ReaderDep,
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
