"""The graph's read routes keep finished answers (``routers/graph.py``): a repeat request
while the graph is unchanged is answered from the app's cache with the same bytes, an
``If-None-Match`` naming the answer's ETag gets 304, and a publish or an edit is seen at
once (never an old answer)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from proctor.api._models import StoryList
from proctor.api.routers.graph import (
    _GRAPH_VIEW,
    _STORY_LIST,
    FRESH_SECONDS,
    AnswerCache,
    _json,
    graph_json,
    stories_json,
    without_excerpts,
)
from proctor.graph import Coverage, SourceRef
from proctor.graph.views import (
    EventView,
    GraphTotals,
    GraphView,
    ResultSummary,
    SourceExcerpt,
    StoryLineView,
)
from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import ReadStore, open_store
from tests.api.conftest import Api, run
from tests.backends import copy_database
from tests.conftest import EXAMPLES_DIR


def _result_id(api: Api) -> str:
    results = api.get("/api/results").json()["results"]
    return str(results[0]["result_id"])


def _graph_url(api: Api) -> str:
    return f"/api/results/{_result_id(api)}/graph?limit=500"


def test_a_repeat_request_naming_the_etag_is_answered_304_and_without_it_the_same_bytes(
    api: Api,
) -> None:
    url = _graph_url(api)
    for path in (url, "/api/stories?target=all"):
        first = api.get(path)
        assert first.status_code == 200, first.text
        etag = first.headers["ETag"]
        assert first.headers["Cache-Control"] == "no-cache"
        unchanged = api.get(path, headers={"If-None-Match": etag})
        assert unchanged.status_code == 304
        assert unchanged.content == b""
        assert unchanged.headers["ETag"] == etag
        assert api.get(path, headers={"If-None-Match": f'W/{etag}, "other"'}).status_code == 304
        again = api.get(path, headers={"If-None-Match": '"something-else"'})
        assert again.status_code == 200
        assert again.content == first.content
        assert again.headers["ETag"] == etag


def test_a_repeat_request_is_answered_without_reading_the_graph_again(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _graph_url(api)
    reader: ReadStore = api.app.state.store_holder.reader()
    reads: list[tuple[Any, ...]] = []
    graph = reader.graph

    def counted(*args: Any, **kwargs: Any) -> GraphView:
        reads.append(args)
        return graph(*args, **kwargs)

    monkeypatch.setattr(reader, "graph", counted)
    bodies = {api.get(url).content for _ in range(3)}
    assert len(bodies) == 1
    assert len(reads) == 1
    api.get(url.replace("limit=500", "limit=499"))  # another question: read
    assert len(reads) == 2


def test_an_edit_is_seen_at_once_with_a_new_etag(api: Api) -> None:
    url = _graph_url(api)
    first = api.get(url)
    entity = next(e for e in first.json()["entities"] if e["state"] != "confirmed")
    confirmed = api.post(f"/api/graph/entity/{entity['entity_id']}/confirm")
    assert confirmed.status_code == 200, confirmed.text
    after = api.get(url, headers={"If-None-Match": first.headers["ETag"]})
    assert after.status_code == 200
    assert after.headers["ETag"] != first.headers["ETag"]
    states = {e["entity_id"]: e["state"] for e in after.json()["entities"]}
    assert states[entity["entity_id"]] == "confirmed"


def test_the_answer_is_the_bytes_fastapi_makes_of_the_same_view(api: Api) -> None:
    """The same JSON as a route returning the view (what the route did before it kept
    answers): same fields, order and encoding."""
    result_id = _result_id(api)
    reader: ReadStore = api.app.state.store_holder.reader()
    plain = FastAPI()

    @plain.get("/graph")
    def as_before() -> GraphView:
        return reader.graph(result_id, limit=500)

    async def fetch() -> bytes:
        transport = httpx.ASGITransport(app=plain)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            return (await client.get("/graph")).content

    assert api.get(f"/api/results/{result_id}/graph?limit=500").content == run(fetch)


@pytest.fixture(scope="module")
def codex_reviewed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("answers") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [EXAMPLES_DIR / "codex"])
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    return path


@pytest.fixture
def growing(codex_reviewed: Path, proctor_home: Path) -> Iterator[tuple[Api, Path]]:
    copy = proctor_home / "proctor.db"
    copy_database(codex_reviewed, copy)
    client = Api(copy)
    try:
        yield client, copy
    finally:
        client.close()


def test_a_new_result_is_seen_at_once_by_the_story_list_and_the_graph(
    growing: tuple[Api, Path],
) -> None:
    api, database = growing
    first_result = _result_id(api)
    graph_url = f"/api/results/{first_result}/graph?cumulative=true&limit=500"
    stories = api.get("/api/stories?target=all")
    graph = api.get(graph_url)
    assert api.get(graph_url).content == graph.content  # kept
    store = open_store(database)  # another writer, as a review in another process
    try:
        ingest(store, [EXAMPLES_DIR / "claude-code"])
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    assert _result_id(api) != first_result
    stories_after = api.get("/api/stories?target=all")
    assert len(stories_after.json()["stories"]) > len(stories.json()["stories"])
    assert stories_after.headers["ETag"] != stories.headers["ETag"]
    # The first result's cumulative graph is as of that result: the same content, read again.
    assert api.get(graph_url).json() == graph.json()


def test_the_cache_drops_answers_of_another_version_stale_ones_and_the_least_recent() -> None:
    now = [0.0]
    cache = AnswerCache(entries=2, max_bytes=10, clock=lambda: now[0])
    kept = cache.put("a", "v1", b"1234")
    assert cache.get("a", "v1") == kept
    assert kept.etag == cache.put("b", "v1", b"1234").etag  # the ETag is of the bytes
    assert cache.get("a", "v2") is None  # another version: read again
    assert cache.get("a", "v1") is None  # and dropped
    cache.put("a", "v1", b"1234")
    cache.put("c", "v1", b"12")
    assert cache.get("b", "v1") is None  # the least recently used went first
    assert cache.get("a", "v1") is not None and cache.get("c", "v1") is not None
    cache.put("d", "v1", b"123456789")  # over the byte budget with the others: they go
    assert cache.get("a", "v1") is None and cache.get("d", "v1") is not None
    assert cache.put("e", "v1", b"x" * 11).body == b"x" * 11  # too big: answered, not kept
    assert cache.get("e", "v1") is None
    now[0] = FRESH_SECONDS + 1
    assert cache.get("d", "v1") is None  # too old


def _pydantic_graph(view: GraphView) -> bytes:
    return _json(_GRAPH_VIEW, view)


def test_the_encoder_writes_every_view_as_pydantic_does(api: Api) -> None:
    """``graph_json`` / ``stories_json`` (orjson from the dataclasses) give pydantic's bytes:
    the whole result, a bounded page, a page further back, a story line, the snapshot,
    the cumulative graph, without excerpts, and the story lists."""
    result_id = _result_id(api)
    reader: ReadStore = api.app.state.store_holder.reader()
    whole = reader.graph(result_id, limit=None)
    line = whole.story_lines[0].story_line_id
    views = [
        whole,
        reader.graph(result_id, limit=5),
        reader.graph(result_id, limit=3, offset=4),
        reader.graph(result_id, line, limit=2),
        reader.graph(result_id, as_published=True, limit=500),
        reader.project_graph(result_id, limit=7),
    ]
    views.append(without_excerpts(views[1]))
    assert all(v.events and v.sources for v in views[:3])
    for view in views:
        assert graph_json(view) == _pydantic_graph(view)
    for target in ("all", *(p.name for p in reader.projects())):
        stories = reader.stories(target)
        assert stories_json(stories) == _json(_STORY_LIST, StoryList(stories=stories))


def test_the_encoder_keeps_pydantic_s_keys_escapes_and_times() -> None:
    """Odd text, a source id with a comma, times with and without microseconds, and a
    number orjson cannot write (pydantic's way then)."""
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    text = "".join(map(chr, range(0x80))) + '\u2028é€😀\ufeff "quoted" \\ back'
    coverage = Coverage(sources_total=2**40, sources_read=1, sources_omitted=0, gaps=(text,))
    result = ResultSummary(
        "r", "run", "all", None, None, at, at.replace(microsecond=120), "manual", text, "",
        coverage, False, at.replace(microsecond=554140),
    )  # fmt: skip
    ref = SourceRef("tool_call", 'a,b"c', "arguments.command", 0, 3)
    event = EventView("e", None, None, "command", text, text, at, "ok", "structural", ("x",),
                      (), (ref,), 1)  # fmt: skip
    excerpt = SourceExcerpt("tool_call", 'a,b"c', True, "conv", None, text, text, at)
    view = GraphView(
        result, None, False, events=(event,), sources={("tool_call", "a,b\"c"): excerpt},
        totals=GraphTotals(events=1), limit=None,
    )  # fmt: skip
    assert graph_json(view) == _pydantic_graph(view)
    huge = replace(view, totals=GraphTotals(events=2**70))
    assert graph_json(huge) == _pydantic_graph(huge)
    line = StoryLineView("l", None, None, text, text, ("e",), at, None, at, 2**65)
    assert stories_json([line]) == _json(_STORY_LIST, StoryList(stories=[line]))
