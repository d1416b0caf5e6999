"""Read endpoints of the HTTP API (SPEC UI-2), in process."""

from __future__ import annotations

from tests.api.conftest import Api


def test_health_answers_with_the_version(api: Api) -> None:
    response = api.get("/api/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_projects_and_conversations_list_what_was_ingested(api: Api) -> None:
    projects = api.get("/api/projects").json()["projects"]
    assert projects and all(p["conversations"] >= 0 for p in projects)
    page = api.get("/api/conversations", params={"limit": 2, "include_children": True}).json()
    assert page["limit"] == 2 and len(page["conversations"]) == 2
    assert page["total"] > 2
    first = page["conversations"][0]["conversation"]["conversation_id"]
    shown = api.get(f"/api/conversations/{first[:10]}").json()
    assert shown["conversation"]["conversation_id"] == first


def test_an_unknown_conversation_is_404_with_a_sentence(api: Api) -> None:
    response = api.get("/api/conversations/zzzz-no-such-id")
    assert response.status_code == 404
    assert "zzzz-no-such-id" in response.json()["detail"]


def test_pagination_out_of_range_is_422_not_500(api: Api) -> None:
    for url in (
        "/api/conversations?limit=0",
        "/api/conversations?limit=101",
        "/api/findings?offset=-1",
        "/api/activity?limit=abc",
        "/api/findings?min_severity=huge",
        "/api/search?q=",
    ):
        assert api.get(url).status_code == 422, url


def test_findings_are_listed_and_shown_by_prefix(api: Api) -> None:
    page = api.get("/api/findings", params={"limit": 100}).json()
    assert page["total"] == len(page["findings"]) > 0
    finding = page["findings"][0]
    shown = api.get(f"/api/findings/{finding['finding_id'][:12]}")
    assert shown.status_code == 200
    assert shown.json()["finding_id"] == finding["finding_id"]
    assert api.get("/api/findings/nope-nope").status_code == 404


def test_reviews_results_graph_and_stories_show_the_published_review(api: Api) -> None:
    reviews = api.get("/api/reviews").json()["reviews"]
    assert reviews and reviews[0]["status"] == "completed"
    run = api.get(f"/api/reviews/{reviews[0]['run_id']}").json()
    assert run["result_id"]
    results = api.get("/api/results").json()["results"]
    assert results[0]["result_id"] == run["result_id"]
    graph = api.get(f"/api/results/{run['result_id'][:12]}/graph", params={"limit": 5}).json()
    assert len(graph["events"]) <= 5
    assert api.get("/api/results/nothing-here/graph").status_code == 404
    assert api.get("/api/results/x/graph?limit=0").status_code == 422
    stories = api.get("/api/stories", params={"target": results[0]["scope_key"]})
    assert stories.status_code == 200
    assert isinstance(stories.json()["stories"], list)


def test_search_falls_back_to_full_text_and_activity_lists_the_review(api: Api) -> None:
    found = api.get("/api/search", params={"q": "test", "limit": 3}).json()
    assert found["query"] == "test" and len(found["hits"]) <= 3
    activity = api.get("/api/activity").json()["activity"]
    assert activity and activity[0]["kind"] == "manual"


def test_the_openapi_document_names_every_endpoint(api: Api) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for path in (
        "/api/health",
        "/api/findings/{finding_ref}/status",
        "/api/results/{result_ref}/graph",
        "/api/graph/{object_type}/{object_ref}/revise",
    ):
        assert path in paths


def test_findings_are_filtered_by_conversation_status_and_severity(api: Api) -> None:
    everything = api.get("/api/findings", params={"limit": 100}).json()["findings"]
    first = everything[0]
    severity = first["severity"]
    exact = api.get("/api/findings", params={"severity": severity, "limit": 100}).json()
    assert exact["total"] == sum(1 for f in everything if f["severity"] == severity)
    assert all(f["severity"] == severity for f in exact["findings"])
    two = api.get(
        "/api/findings", params=[("severity", "high"), ("severity", "info"), ("limit", "100")]
    ).json()
    assert two["total"] == sum(1 for f in everything if f["severity"] in ("high", "info"))

    conversation = first["conversation_id"]
    mine = api.get("/api/findings", params={"conversation": conversation[:12], "limit": 100}).json()
    assert mine["total"] == sum(1 for f in everything if f["conversation_id"] == conversation)
    resolved = api.get("/api/findings", params={"status": "resolved"}).json()
    assert resolved["total"] == sum(1 for f in everything if f["status"] == "resolved")
    assert api.get("/api/findings", params={"severity": "huge"}).status_code == 422
    assert api.get("/api/findings", params={"digested": "maybe"}).status_code == 422
