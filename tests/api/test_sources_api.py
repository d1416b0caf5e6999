"""Sources and graph reads over HTTP: conversation sources, source text and context,
a result's overview, attention and one object with its cited sources (REV-11, REV-12)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tests.api.conftest import Api


def _result_id(api: Api) -> str:
    result_id: str = api.get("/api/results").json()["results"][0]["result_id"]
    return result_id


def _graph(api: Api) -> dict[str, Any]:
    graph: dict[str, Any] = api.get(f"/api/results/{_result_id(api)}/graph").json()
    return graph


def _conversation_with_tool_calls(api: Api) -> str:
    page = api.get("/api/conversations", params={"limit": 100}).json()
    for row in page["conversations"]:
        if row["tool_calls"] > 0:
            conversation_id: str = row["conversation"]["conversation_id"]
            return conversation_id
    raise AssertionError("the examples have a conversation with tool calls")


def test_a_conversation_s_sources_are_paged_in_reading_order(api: Api) -> None:
    conversation_id = _conversation_with_tool_calls(api)
    url = f"/api/conversations/{conversation_id[:12]}/sources"
    first = api.get(url, params={"limit": 3}).json()
    assert first["conversation_id"] == conversation_id
    assert first["total"] > 3 and len(first["sources"]) == 3
    everything = api.get(url, params={"limit": 100}).json()["sources"]
    assert {s["source_type"] for s in everything} >= {"message", "tool_call"}
    second = api.get(url, params={"limit": 3, "offset": 3}).json()["sources"]
    assert [s["source_id"] for s in first["sources"] + second] == [
        s["source_id"] for s in everything[:6]
    ]
    assert all(s["conversation_id"] == conversation_id for s in everything)
    assert api.get(url, params={"offset": 10_000}).json()["sources"] == []


def test_one_source_is_read_in_full_and_with_its_neighbours(api: Api) -> None:
    conversation_id = _conversation_with_tool_calls(api)
    listed = api.get(f"/api/conversations/{conversation_id}/sources", params={"limit": 5})
    sources = listed.json()["sources"]
    middle = sources[2]
    path = f"{middle['source_type']}/{quote(middle['source_id'], safe='/:')}"
    text = api.get(f"/api/sources/{path}")
    assert text.status_code == 200, text.text
    assert text.json() == middle

    context = api.get(f"/api/source-context/{path}", params={"before": 2, "after": 2}).json()
    assert context["focus"]["source_id"] == middle["source_id"]
    assert [s["source_id"] for s in context["before"]] == [s["source_id"] for s in sources[:2]]
    assert [s["source_id"] for s in context["after"]] == [s["source_id"] for s in sources[3:5]]
    narrow = api.get(f"/api/source-context/{path}", params={"before": 0, "after": 0}).json()
    assert narrow["before"] == [] and narrow["after"] == []


def test_unknown_sources_and_bad_parameters_are_refused(api: Api) -> None:
    missing = api.get("/api/sources/message/no/such:source")
    assert missing.status_code == 404 and "no/such:source" in missing.json()["detail"]
    assert api.get("/api/source-context/message/nothing-here").status_code == 404
    assert api.get("/api/sources/planet/abc").status_code == 422
    assert api.get("/api/source-context/message/x?before=21").status_code == 422
    assert api.get("/api/conversations/zzzz-none/sources").status_code == 404
    assert api.get("/api/conversations/x/sources?limit=0").status_code == 422


def test_a_result_s_overview_and_attention_describe_its_scope(api: Api) -> None:
    result_id = _result_id(api)
    overview = api.get(f"/api/results/{result_id[:10]}/overview").json()
    assert overview["result"]["result_id"] == result_id
    assert overview["totals"]["events"] > 0
    assert overview["totals"]["entities"] == _graph(api)["totals"]["entities"]

    attention = api.get(f"/api/results/{result_id[:10]}/attention").json()
    assert attention["result_id"] == result_id
    hours = attention["hours"]
    assert hours and all(h["messages"] > 0 for h in hours)
    assert [h["hour_start"] for h in hours] == sorted(h["hour_start"] for h in hours)
    for suffix in ("overview", "attention"):
        assert api.get(f"/api/results/no-such-result/{suffix}").status_code == 404


def test_one_object_of_a_result_comes_with_the_sources_it_cites(api: Api) -> None:
    result_id = _result_id(api)
    graph = _graph(api)
    entity = next(e for e in graph["entities"] if e["sources"])
    found = api.get(f"/api/results/{result_id}/objects/{entity['entity_id'][:14]}")
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["object_type"] == "entity" and body["entity"]["entity_id"] == entity["entity_id"]
    assert body["relation"] is None and body["event"] is None
    assert body["source_count"] >= len(body["sources"]) > 0
    cited = {(s["source_type"], s["source_id"]) for s in entity["sources"]}
    assert {(s["source_type"], s["source_id"]) for s in body["sources"]} == cited
    assert all(s["exists"] and s["excerpt"] for s in body["sources"])

    event = graph["events"][0]
    shown = api.get(f"/api/results/{result_id}/objects/{event['event_id']}").json()
    assert shown["object_type"] == "event"
    assert shown["event"]["entity_ids"] == sorted(event["entity_ids"])


def test_an_object_the_result_did_not_publish_is_404(api: Api) -> None:
    result_id = _result_id(api)
    missing = api.get(f"/api/results/{result_id}/objects/no-such-object")
    assert missing.status_code == 404 and "no-such-object" in missing.json()["detail"]
    entity_id = _graph(api)["entities"][0]["entity_id"]
    assert api.get(f"/api/results/nope/objects/{entity_id}").status_code == 404


def test_an_edited_object_shows_the_person_s_edit(api: Api) -> None:
    result_id = _result_id(api)
    entity_id = _graph(api)["entities"][0]["entity_id"]
    assert api.post(f"/api/graph/entity/{entity_id}/confirm").status_code == 200
    body = api.get(f"/api/results/{result_id}/objects/{entity_id}").json()
    assert [e["action"] for e in body["edits"]] == ["confirm"]
    assert body["entity"]["state"] == "confirmed"
