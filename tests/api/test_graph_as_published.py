"""A result's graph read as published (its snapshot) over HTTP, beside the current read."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api


def _graph(api: Api, **params: object) -> dict[str, Any]:
    result_id = api.get("/api/results").json()["results"][0]["result_id"]
    response = api.get(f"/api/results/{result_id}/graph", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    graph: dict[str, Any] = response.json()
    return graph


def test_the_graph_as_published_keeps_the_names_a_later_revision_changed(api: Api) -> None:
    entity = _graph(api)["entities"][0]
    revised = api.post(
        f"/api/graph/entity/{entity['entity_id']}/revise", json={"name": "renamed by a person"}
    )
    assert revised.status_code == 200, revised.text

    current = _graph(api)
    now = next(e for e in current["entities"] if e["entity_id"] == entity["entity_id"])
    assert current["as_published"] is False
    assert (now["name"], now["state"]) == ("renamed by a person", "revised")

    published = _graph(api, as_published="true")
    then = next(e for e in published["entities"] if e["entity_id"] == entity["entity_id"])
    assert published["as_published"] is True
    assert (then["name"], then["state"]) == (entity["name"], entity["state"])
    assert [e["event_id"] for e in published["events"]] == [
        e["event_id"] for e in current["events"]
    ]


def test_the_as_published_flag_must_be_a_boolean(api: Api) -> None:
    result_id = api.get("/api/results").json()["results"][0]["result_id"]
    response = api.get(f"/api/results/{result_id}/graph", params={"as_published": "sometimes"})
    assert response.status_code == 422
