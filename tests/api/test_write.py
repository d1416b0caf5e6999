"""Write endpoints: finding status actions and a person's graph edits (SPEC UI-2, UI-5)."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api


def _graph(api: Api) -> dict[str, Any]:
    result_id = api.get("/api/results").json()["results"][0]["result_id"]
    graph: dict[str, Any] = api.get(f"/api/results/{result_id}/graph").json()
    return graph


def test_a_finding_is_acknowledged_resolved_and_reopened(api: Api) -> None:
    finding_id = api.get("/api/findings").json()["findings"][0]["finding_id"]
    url = f"/api/findings/{finding_id}/status"
    assert api.post(url, json={"action": "ack"}).json()["status"] == "acknowledged"
    assert api.post(url, json={"action": "resolve"}).json()["status"] == "resolved"
    assert api.post(url, json={"action": "reopen"}).json()["status"] == "open"
    assert api.get(f"/api/findings/{finding_id}").json()["status"] == "open"


def test_an_unknown_action_or_finding_is_refused_precisely(api: Api) -> None:
    finding_id = api.get("/api/findings").json()["findings"][0]["finding_id"]
    assert (
        api.post(f"/api/findings/{finding_id}/status", json={"action": "burn"}).status_code == 422
    )
    malformed = api.post(
        f"/api/findings/{finding_id}/status",
        content=b"{",
        headers={"Content-Type": "application/json"},
    )
    assert malformed.status_code == 422
    missing = api.post("/api/findings/no-such-finding/status", json={"action": "ack"})
    assert missing.status_code == 404
    assert missing.json()["detail"]


def test_a_person_confirms_revises_and_removes_graph_objects(api: Api) -> None:
    entities = _graph(api)["entities"]
    assert len(entities) >= 2
    first, second = entities[0]["entity_id"], entities[1]["entity_id"]

    confirmed = api.post(f"/api/graph/entity/{first}/confirm")
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["edit"]["action"] == "confirm"

    revised = api.post(f"/api/graph/entity/{first}/revise", json={"name": "Renamed by a person"})
    assert revised.status_code == 200, revised.text
    removed = api.post(f"/api/graph/entity/{second}/remove")
    assert removed.status_code == 200, removed.text

    names = {e["entity_id"]: e for e in _graph(api)["entities"]}
    assert names[first]["name"] == "Renamed by a person"


def test_graph_edits_refuse_unknown_types_objects_and_fields(api: Api) -> None:
    assert api.post("/api/graph/planet/abc/confirm").status_code == 422
    assert api.post("/api/graph/entity/no-such-entity/confirm").status_code == 404
    entity_id = _graph(api)["entities"][0]["entity_id"]
    assert (
        api.post(f"/api/graph/entity/{entity_id}/revise", json={"colour": "red"}).status_code == 422
    )


def test_a_transition_the_lifecycle_forbids_is_400_with_the_allowed_ones(api: Api) -> None:
    finding_id = api.get("/api/findings").json()["findings"][0]["finding_id"]
    url = f"/api/findings/{finding_id}/status"
    assert api.post(url, json={"action": "dismiss"}).status_code == 200
    refused = api.post(url, json={"action": "ack"})
    assert refused.status_code == 400
    assert "can become: open" in refused.json()["detail"]


def test_a_finding_is_digested_and_the_mark_cleared(api: Api) -> None:
    finding_id = api.get("/api/findings").json()["findings"][0]["finding_id"]
    url = f"/api/findings/{finding_id[:12]}/digested"
    marked = api.post(url, json={"digested": True})
    assert marked.status_code == 200, marked.text
    assert marked.json()["digested"] is True
    assert api.get(f"/api/findings/{finding_id}").json()["digested"] is True
    digested = api.get("/api/findings", params={"digested": True}).json()
    assert [f["finding_id"] for f in digested["findings"]] == [finding_id]
    undigested = api.get("/api/findings", params={"digested": False, "limit": 100}).json()
    assert finding_id not in {f["finding_id"] for f in undigested["findings"]}
    assert undigested["total"] == api.get("/api/findings").json()["total"] - 1

    cleared = api.post(url, json={"digested": False})
    assert cleared.json()["digested"] is False
    assert api.get("/api/findings", params={"digested": True}).json()["total"] == 0


def test_digesting_refuses_unknown_findings_and_bad_bodies(api: Api) -> None:
    finding_id = api.get("/api/findings").json()["findings"][0]["finding_id"]
    missing = api.post("/api/findings/no-such-finding/digested", json={"digested": True})
    assert missing.status_code == 404
    for body in ({}, {"digested": "perhaps"}, {"digested": True, "colour": "red"}):
        assert api.post(f"/api/findings/{finding_id}/digested", json=body).status_code == 422
