"""Memories from findings and "Run now" over HTTP (SPEC SUP-1, SUP-3, SUP-10).

The examples are checked by the rules: a finding is remembered, edited and confirmed or
discarded; "Run now" answers at once — refused with what to do without a model or with a
spent budget, ``202 queued`` otherwise, the analysis then running in the background.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor.models import set_default_connection
from proctor.store import open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.api.conftest import Api

CLAUDE = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"


def _finding(api: Api) -> dict[str, Any]:
    page = api.get("/api/findings", params={"conversation": CLAUDE, "limit": 1}).json()
    finding: dict[str, Any] = page["findings"][0]
    return finding


def test_a_finding_is_remembered_edited_and_confirmed_as_a_memory_of_its_project(
    api: Api,
) -> None:
    finding = _finding(api)

    drafted = api.post(f"/api/findings/{finding['finding_id']}/remember")

    assert drafted.status_code == 200, drafted.text
    candidate = drafted.json()
    assert candidate["status"] == "candidate" and finding["title"] in candidate["text"]
    listed = api.get("/api/memories").json()
    assert listed["memories"] == [] and [c["candidate_id"] for c in listed["candidates"]] == [
        candidate["candidate_id"]
    ]
    confirmed = api.post(
        f"/api/memories/{candidate['candidate_id']}/confirm",
        json={"text": "Run the whole suite before claiming it passes."},
    ).json()
    assert confirmed["status"] == "confirmed" and confirmed["memory_id"]
    listed = api.get("/api/memories", params={"project": candidate["project_id"]}).json()
    assert [m["text"] for m in listed["memories"]] == [
        "Run the whole suite before claiming it passes."
    ]
    assert listed["candidates"] == []
    assert api.get("/api/memories", params={"project": "no-such-project"}).json() == {
        "memories": [],
        "candidates": [],
    }
    refused = api.post(f"/api/memories/{candidate['candidate_id']}/discard")
    assert refused.status_code == 400 and "already confirmed" in refused.json()["detail"]


def test_a_discarded_draft_writes_no_memory(api: Api) -> None:
    candidate = api.post(f"/api/findings/{_finding(api)['finding_id']}/remember").json()

    discarded = api.post(f"/api/memories/{candidate['candidate_id']}/discard").json()

    assert discarded["status"] == "discarded"
    assert api.get("/api/memories").json() == {"memories": [], "candidates": []}
    again = api.post(f"/api/memories/{candidate['candidate_id']}/confirm")
    assert again.status_code == 400 and "discarded" in again.json()["detail"]


def test_bad_memory_requests_are_refused_naming_what_is_wrong(api: Api) -> None:
    assert api.post("/api/findings/nope/remember").status_code == 404
    assert api.post("/api/memories/nope/confirm").status_code == 404
    candidate = api.post(f"/api/findings/{_finding(api)['finding_id']}/remember").json()
    empty = api.post(f"/api/memories/{candidate['candidate_id']}/confirm", json={"text": "  "})
    assert empty.status_code == 400 and "empty" in empty.json()["detail"]
    long = api.post(f"/api/memories/{candidate['candidate_id']}/confirm", json={"text": "x" * 2001})
    assert long.status_code == 422
    extra = api.post(f"/api/memories/{candidate['candidate_id']}/confirm", json={"txt": "typo"})
    assert extra.status_code == 422


def test_run_now_without_a_model_is_refused_at_once_pointing_to_settings(api: Api) -> None:
    refused = api.post(f"/api/sessions/{CLAUDE}/run")
    assert refused.status_code == 400
    assert "no analysis can run" in refused.json()["detail"]
    assert "Settings" in refused.json()["detail"]


def test_run_now_is_queued_and_then_refused_once_the_budget_is_spent(
    api: Api, database: Path
) -> None:
    nothing: dict[str, Any] = {"decisions": []}
    with ScriptedModelServer(responder=lambda _request: nothing) as server:
        store = open_store(database)
        try:
            store.save_connection(server.connection("scripted"))
            set_default_connection(store, "scripted")
        finally:
            store.close()
        enabled = api.post(
            f"/api/sessions/{CLAUDE}/enable", json={"mode": "risk", "budget_calls": 1}
        )
        assert enabled.status_code == 200, enabled.text

        queued = api.post(f"/api/sessions/{CLAUDE}/run")

        assert queued.status_code == 202, queued.text
        assert queued.json() == {"target": CLAUDE, "mode": "risk", "status": "queued"}
        from proctor.api.routers.sessions import manual_queue

        queue = manual_queue(api.app, api.app.state.store_holder.get())
        assert queue.wait_idle(timeout=60)
        status = api.get(f"/api/sessions/{CLAUDE}").json()
        assert status["last_run"]["status"] == "ok" and status["last_run"]["trigger"] == "manual"
        assert status["state"] == "paused: budget" and len(server.requests) == 1

        refused = api.post(f"/api/sessions/{CLAUDE}/run")

        assert refused.status_code == 400
        assert refused.json()["detail"].startswith("supervision paused: budget")
        assert len(server.requests) == 1
