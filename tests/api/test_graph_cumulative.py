"""The scope's graph as of a result (``cumulative=true``): every review of the scope up to
it, merged, beside the one review's own changes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from proctor.supervision import check_conversations
from tests.api.conftest import Api
from tests.backends import copy_database
from tests.conftest import EXAMPLES_DIR


@pytest.fixture(scope="module")
def two_reviews(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One example reviewed, then the other ingested and reviewed: two results of one scope."""
    path = tmp_path_factory.mktemp("cumulative") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [EXAMPLES_DIR / "claude-code"])
        start_review(store, ReviewRequest(), semantic=None)
        ingest(store, [EXAMPLES_DIR / "codex"])
        start_review(store, ReviewRequest(), semantic=None)
        rows = store.list_conversations(include_children=True)
        check_conversations(
            store,
            [r.conversation_id for r in rows if r.conversation.parent_conversation_id is None],
        )
    finally:
        store.close()
    return path


@pytest.fixture
def api(two_reviews: Path, proctor_home: Path) -> Iterator[Api]:
    copy = proctor_home / "proctor.db"
    copy_database(two_reviews, copy)
    client = Api(copy)
    try:
        yield client
    finally:
        client.close()


def _graph(api: Api, result_id: str, **params: object) -> dict[str, Any]:
    response = api.get(f"/api/results/{result_id}/graph", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    graph: dict[str, Any] = response.json()
    return graph


def _ids(graph: dict[str, Any], kind: str, key: str) -> set[str]:
    return {item[key] for item in graph[kind]}


def test_the_cumulative_graph_of_the_newest_result_holds_both_reviews(api: Api) -> None:
    newest, older = (r["result_id"] for r in api.get("/api/results").json()["results"])
    first, second = _graph(api, older), _graph(api, newest)
    assert first["events"] and second["events"]
    assert not _ids(first, "events", "event_id") & _ids(second, "events", "event_id")

    merged = _graph(api, newest, cumulative="true")
    assert merged["result"]["result_id"] == newest
    both = _ids(first, "events", "event_id") | _ids(second, "events", "event_id")
    assert _ids(merged, "events", "event_id") == both
    assert merged["totals"]["events"] == len(both)
    for kind, key in (("entities", "entity_id"), ("story_lines", "story_line_id")):
        assert _ids(merged, kind, key) == _ids(first, kind, key) | _ids(second, kind, key)
    times = [e["occurred_at"] for e in merged["events"]]
    assert times == sorted(times)
    # Every shown event's story lines are shown, holding it.
    lines = {line["story_line_id"]: set(line["event_ids"]) for line in merged["story_lines"]}
    for event in merged["events"]:
        for line_id in event["story_line_ids"]:
            assert event["event_id"] in lines[line_id]


def test_the_cumulative_graph_of_an_older_result_leaves_out_later_reviews(api: Api) -> None:
    older = api.get("/api/results").json()["results"][1]["result_id"]
    assert _ids(_graph(api, older, cumulative="true"), "events", "event_id") == _ids(
        _graph(api, older), "events", "event_id"
    )


def test_a_bounded_cumulative_graph_shows_the_newest_events_and_what_they_involve(
    api: Api,
) -> None:
    newest = api.get("/api/results").json()["results"][0]["result_id"]
    whole = _graph(api, newest, cumulative="true")
    bounded = _graph(api, newest, cumulative="true", limit=4)
    assert [e["event_id"] for e in bounded["events"]] == [
        e["event_id"] for e in whole["events"][-4:]
    ]
    assert bounded["totals"] == whole["totals"]
    linked = {entity_id for e in bounded["events"] for entity_id in e["entity_ids"]}
    assert _ids(bounded, "entities", "entity_id") <= linked
    assert _ids(bounded, "story_lines", "story_line_id") == {
        line_id for e in bounded["events"] for line_id in e["story_line_ids"]
    }
    cited = {
        f"{s['source_type']},{s['source_id']}" for e in bounded["events"] for s in e["sources"]
    }
    assert cited and cited <= set(bounded["sources"])


def test_a_person_s_edit_shows_in_the_cumulative_graph(api: Api) -> None:
    newest, older = (r["result_id"] for r in api.get("/api/results").json()["results"])
    entity = _graph(api, older)["entities"][0]
    revised = api.post(
        f"/api/graph/entity/{entity['entity_id']}/revise", json={"name": "named by a person"}
    )
    assert revised.status_code == 200, revised.text
    merged = _graph(api, newest, cumulative="true")
    shown = next(e for e in merged["entities"] if e["entity_id"] == entity["entity_id"])
    assert (shown["name"], shown["state"]) == ("named by a person", "revised")


@pytest.mark.parametrize(
    "params", [{"offset": 10}, {"as_published": "true"}, {"story_line": "x"}], ids=str
)
def test_cumulative_refuses_what_only_one_result_s_view_can_do(
    api: Api, params: dict[str, object]
) -> None:
    newest = api.get("/api/results").json()["results"][0]["result_id"]
    response = api.get(f"/api/results/{newest}/graph", params={"cumulative": "true", **params})
    assert response.status_code == 400, response.text
    assert "cumulative=true" in response.json()["detail"]


def _when(iso: str | None) -> datetime | None:
    return None if iso is None else datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_findings_of_the_graph_s_conversations_sit_at_their_earliest_cited_source(
    api: Api,
) -> None:
    newest, older = (r["result_id"] for r in api.get("/api/results").json()["results"])
    response = api.get(f"/api/results/{newest}/findings", params={"cumulative": "true"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["findings"] and answer["total"] == len(answer["findings"])
    merged = _graph(api, newest, cumulative="true")
    conversations = {e["conversation_id"] for e in merged["events"]}
    assert {f["conversation_id"] for f in answer["findings"]} <= conversations
    for found in answer["findings"]:
        finding = api.get(f"/api/findings/{found['finding_id']}").json()
        times = []
        for evidence in finding["evidence"]:
            if evidence["source_type"] == "conversation":
                continue
            context = api.get(
                f"/api/source-context/{evidence['source_type']}/{evidence['source_id']}",
                params={"before": 0, "after": 0},
            )
            if context.status_code == 200 and context.json()["focus"]["occurred_at"]:
                times.append(_when(context.json()["focus"]["occurred_at"]))
        assert _when(found["at"]) == min(times, default=None), (found, times)
    # One review's own: only the conversations its events come from.
    own = api.get(f"/api/results/{older}/findings").json()["findings"]
    first = {e["conversation_id"] for e in _graph(api, older)["events"]}
    assert own and {f["conversation_id"] for f in own} <= first
    assert {f["finding_id"] for f in own} < {f["finding_id"] for f in answer["findings"]}
