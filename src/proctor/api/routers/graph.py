"""Results, the story graph, stories and a person's edits (confirm / revise / remove).

A result's graph and a target's story lines are the largest answers the API gives (a
page of 500 events is close to a megabyte of JSON) and the ones the web UI asks for again
and again. The app keeps the last ``AnswerCache.ENTRIES`` of them, finished (JSON bytes),
with the store's graph version they were read at (``graph_version``: it changes with
every publish, edit, or change to the conversations and sources they quote): a repeat
request while nothing changed is answered from there, and every answer carries an
``ETag`` (a hash of its bytes), so a client that sends it back in ``If-None-Match`` gets
``304 Not Modified``. An entry is also read afresh after ``FRESH_SECONDS``, for a write
stamped before an answer was read but committed after it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, FastAPI, Header, Query, Request, Response
from pydantic import BaseModel, TypeAdapter

from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.api._models import EditResponse, ResultPage, Revision, StoryList
from proctor.api._source_models import Attention, AttentionHour, ResultOverview
from proctor.errors import ConfigError
from proctor.findings import Severity, Status
from proctor.graph import GraphObjectType
from proctor.graph.views import GraphView, ResultObject, ResultSummary, StoryLineView
from proctor.store import FindingFilter, ReadStore

router = APIRouter(tags=["graph"])

FRESH_SECONDS = 60.0
"""How long a kept answer is reused while the graph version says nothing changed."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A finished JSON answer: its bytes, their ETag, and the graph version it was read at."""

    version: str
    body: bytes
    etag: str
    made: float
    """``time.monotonic()`` when it was read."""


class AnswerCache:
    """The last few finished answers of the graph's read routes, least recently used out."""

    ENTRIES = 16
    BYTES = 64 * 2**20
    """At most this many bytes of answers are kept (a 500-event page is about 1 MB)."""

    def __init__(
        self,
        entries: int = ENTRIES,
        max_bytes: int = BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries = entries
        self._max_bytes = max_bytes
        self._clock = clock
        self._kept: OrderedDict[Hashable, Answer] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: str) -> Answer | None:
        """The kept answer to ``key`` when it was read at ``version`` and is still fresh."""
        with self._lock:
            answer = self._kept.get(key)
            if answer is None:
                return None
            if answer.version != version or self._clock() - answer.made > FRESH_SECONDS:
                del self._kept[key]
                return None
            self._kept.move_to_end(key)
            return answer

    def put(self, key: Hashable, version: str, body: bytes) -> Answer:
        """Keep ``body`` as the answer to ``key`` at ``version`` (when it fits) and return it."""
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        answer = Answer(version, body, etag, self._clock())
        if len(body) > self._max_bytes:
            return answer
        with self._lock:
            self._kept[key] = answer
            self._kept.move_to_end(key)
            while len(self._kept) > self._entries or (
                sum(len(a.body) for a in self._kept.values()) > self._max_bytes
            ):
                self._kept.popitem(last=False)
        return answer


_CACHE_LOCK = threading.Lock()


def answer_cache(app: FastAPI) -> AnswerCache:
    """The app's answer cache (one per app, made on first use)."""
    with _CACHE_LOCK:
        cache: AnswerCache | None = getattr(app.state, "graph_answers", None)
        if cache is None:
            cache = app.state.graph_answers = AnswerCache()
        return cache


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    wanted = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return etag in wanted or "*" in wanted


def _answer(
    request: Request,
    store: ReadStore,
    key: Hashable,
    read: Callable[[], bytes],
    if_none_match: str | None,
) -> Response:
    """The kept answer to ``key`` while the graph is unchanged, else ``read()`` (kept);
    304 when ``If-None-Match`` names its ETag."""
    cache = answer_cache(request.app)
    version = store.repos.graph.graph_version()  # before the read: a later write misses
    answer = cache.get(key, version) or cache.put(key, version, read())
    headers = {"ETag": answer.etag, "Cache-Control": "no-cache"}
    if _matches(if_none_match, answer.etag):
        return Response(status_code=304, headers=headers)
    return Response(answer.body, media_type="application/json", headers=headers)


_GRAPH_VIEW: TypeAdapter[GraphView] = TypeAdapter(GraphView)
_STORY_LIST: TypeAdapter[StoryList] = TypeAdapter(StoryList)
IfNoneMatch = Annotated[
    str | None, Header(description="An ETag of an earlier answer: 304 while it is current.")
]
_UNCHANGED: dict[int | str, dict[str, Any]] = {304: {"description": "Unchanged (ETag)."}}


def _json(adapter: TypeAdapter[Any], value: Any) -> bytes:
    """``value`` as FastAPI answers it for a route returning that type (the same bytes)."""
    return adapter.dump_json(adapter.validate_python(value, from_attributes=True), by_alias=True)


_VIEW_FIELDS = tuple(f.name for f in fields(GraphView))
_ORJSON = orjson.OPT_UTC_Z
"""pydantic writes a UTC time with ``Z``; times, field order, escapes are otherwise alike."""


def graph_json(view: GraphView) -> bytes:
    """``view`` as FastAPI answers a route returning ``GraphView``: the same bytes, encoded
    by orjson straight from the view's dataclasses instead of validated into pydantic's
    and serialized from there (a 500-event page: ≈ 870 kB, a third of the route's CPU).
    pydantic writes a ``(source_type, source_id)`` key as the two joined by a comma.
    Anything orjson cannot encode as pydantic would (an integer beyond 64 bits) takes
    pydantic's way; tests/api/test_graph_answers.py compares the two."""
    wire: dict[str, Any] = {name: getattr(view, name) for name in _VIEW_FIELDS}
    wire["sources"] = {f"{kind},{ref}": source for (kind, ref), source in view.sources.items()}
    try:
        return orjson.dumps(wire, option=_ORJSON)
    except TypeError:  # orjson.JSONEncodeError is one
        return _json(_GRAPH_VIEW, view)


def stories_json(stories: list[StoryLineView]) -> bytes:
    """``StoryList(stories=stories)`` as FastAPI answers it (the same bytes; see
    ``graph_json``)."""
    try:
        return orjson.dumps({"stories": stories}, option=_ORJSON)
    except TypeError:
        return _json(_STORY_LIST, StoryList(stories=stories))


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


@router.get("/results/{result_ref}/graph", response_model=GraphView, responses=_UNCHANGED)
def result_graph(
    request: Request,
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
    if_none_match: IfNoneMatch = None,
) -> Response:
    """What one result published, the newest ``limit`` events after skipping ``offset``;
    with ``cumulative``, what every result of its scope up to it published. Answers 304
    when ``If-None-Match`` names the current ETag."""
    result_id = store.resolve_result_id(result_ref)
    if cumulative and (story_line is not None or offset or as_published):
        raise ConfigError(
            "cumulative=true reads the whole scope's newest events: leave out "
            "story_line, offset and as_published"
        )

    def read() -> bytes:
        if cumulative:
            view = store.project_graph(result_id, limit=limit)
        else:
            view = store.graph(
                result_id, story_line, as_published=as_published, limit=limit, offset=offset
            )
        return graph_json(view if excerpts else without_excerpts(view))

    key = ("graph", result_id, story_line, limit, offset, as_published, cumulative, excerpts)
    return _answer(request, store, key, read, if_none_match)


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


@router.get("/stories", response_model=StoryList, responses=_UNCHANGED)
def stories(
    request: Request,
    store: ReaderDep,
    target: Annotated[str, Query(min_length=1, description="A project name or scope key.")],
    if_none_match: IfNoneMatch = None,
) -> Response:
    """Story lines of a project or review scope. Answers 304 when ``If-None-Match`` names
    the current ETag."""

    def read() -> bytes:
        return stories_json(store.stories(target))

    return _answer(request, store, ("stories", target), read, if_none_match)


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
