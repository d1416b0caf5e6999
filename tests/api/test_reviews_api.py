"""Reviews over HTTP: start in the background, BUSY, pause / resume / cancel, the slot, shutdown."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from proctor.api._deps import review_runner
from proctor.api._review_runner import ReviewRunner
from proctor.store import SqlStore
from tests.api.conftest import Api


class HeldWorker:
    """The runner's one worker thread, held busy until released: a started run waits."""

    def __init__(self, api: Api) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.released = threading.Event()
        self.pool.submit(self.released.wait)
        self.runner = ReviewRunner(executor=self.pool)
        api.app.state.review_runner = self.runner

    def release_and_wait(self) -> None:
        """Let the worker go and wait until the run in hand has stopped."""
        self.released.set()
        self.runner.wait(timeout=60)


@pytest.fixture
def held(api: Api) -> Iterator[HeldWorker]:
    worker = HeldWorker(api)
    try:
        yield worker
    finally:
        worker.released.set()
        worker.pool.shutdown(wait=True)


def _start(api: Api, **body: Any) -> dict[str, Any]:
    response = api.post("/api/reviews", json={"reanalyze": True, **body})
    assert response.status_code == 202, response.text
    run: dict[str, Any] = response.json()
    return run


def test_a_review_started_over_http_runs_in_the_background_and_publishes(api: Api) -> None:
    run = _start(api)
    assert run["status"] == "running" and run["active"] is True
    assert run["trigger"] == "manual" and run["reanalyze"] is True
    review_runner(api.app).wait(timeout=120)

    done = api.get(f"/api/reviews/{run['run_id'][:10]}").json()
    assert done["status"] == "completed", done
    assert done["active"] is False and done["result_id"]
    assert done["batches_done"] == done["batches_total"] > 0
    assert done["options"]["semantic_note"]  # no model connection: structural only, said so
    listed = api.get("/api/reviews", params={"limit": 1}).json()["reviews"]
    assert listed[0]["run_id"] == run["run_id"]
    execution = api.get("/api/reviews/execution").json()
    assert execution == {"slot_holder": None, "in_this_server": False, "run": None}


def test_a_second_start_while_one_holds_the_slot_is_409_busy(api: Api, held: HeldWorker) -> None:
    run = _start(api)
    refused = api.post("/api/reviews", json={})
    assert refused.status_code == 409
    assert "BUSY" in refused.json()["detail"] and run["run_id"][:8] in refused.json()["detail"]

    execution = api.get("/api/reviews/execution").json()
    assert execution["slot_holder"] == run["run_id"]
    assert execution["in_this_server"] is True
    assert execution["run"]["phase"] == "reading"
    assert execution["run"]["batches_total"] > 0
    held.release_and_wait()
    assert api.get(f"/api/reviews/{run['run_id']}").json()["status"] == "completed"


def test_a_paused_run_shows_pausing_stops_and_resumes_to_completion(
    api: Api, held: HeldWorker
) -> None:
    run_id = _start(api)["run_id"]
    paused = api.post(f"/api/reviews/{run_id}/pause")
    assert paused.status_code == 200, paused.text
    assert paused.json()["shown"] == "pausing" and paused.json()["phase"] == "pausing"
    assert api.get("/api/reviews/execution").json()["run"]["shown"] == "pausing"
    held.release_and_wait()

    stopped = api.get(f"/api/reviews/{run_id}").json()
    assert stopped["status"] == "paused" and stopped["active"] is False
    assert stopped["batches_done"] == 0  # it stopped before reading a batch

    resumed = api.post(f"/api/reviews/{run_id}/resume", json={})
    assert resumed.status_code == 202, resumed.text
    assert resumed.json()["status"] == "running"
    held.runner.wait(timeout=120)
    assert api.get(f"/api/reviews/{run_id}").json()["status"] == "completed"


def test_a_cancelled_run_shows_cancelling_and_cannot_be_resumed(api: Api, held: HeldWorker) -> None:
    run_id = _start(api)["run_id"]
    cancelled = api.post(f"/api/reviews/{run_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["shown"] == "cancelling"
    held.release_and_wait()
    assert api.get(f"/api/reviews/{run_id}").json()["shown"] == "cancelled"

    refused = api.post(f"/api/reviews/{run_id}/resume")
    assert refused.status_code == 409
    assert "cancelled" in refused.json()["detail"]
    assert api.post(f"/api/reviews/{run_id}/pause").status_code == 409


def test_a_review_is_refused_while_the_supervisor_app_is_disabled(api: Api) -> None:
    store: SqlStore = api.app.state.store_holder.get()
    store.set_setting("app.enabled", False)
    refused = api.post("/api/reviews", json={})
    assert refused.status_code == 409
    assert "proctor app enable" in refused.json()["detail"]
    assert api.get("/api/reviews/execution").json()["slot_holder"] is None


def test_review_requests_with_bad_input_are_refused_precisely(api: Api) -> None:
    missing = api.post("/api/reviews", json={"project": "no-such-project"})
    assert missing.status_code == 404 and "no-such-project" in missing.json()["detail"]
    for body in ({"batch_size": 1}, {"colour": "red"}, {"since": "yesterday-ish"}):
        assert api.post("/api/reviews", json=body).status_code == 422, body
    malformed = api.post("/api/reviews", content=b"{", headers={"Content-Type": "application/json"})
    assert malformed.status_code == 422
    for verb in ("pause", "resume", "cancel"):
        assert api.post(f"/api/reviews/zzzz-none/{verb}").status_code in (404, 409)
    assert api.get("/api/reviews/zzzz-none").status_code == 404
    assert api.get("/api/reviews", params={"status": "sleeping"}).status_code == 422
    assert api.get("/api/reviews/execution").status_code == 200


def test_shutting_down_pauses_the_run_in_hand_like_ctrl_c(api: Api, held: HeldWorker) -> None:
    run_id = _start(api)["run_id"]
    store: SqlStore = api.app.state.store_holder.get()
    paused = threading.Event()

    class SignallingStore:
        """The store, telling the held worker to go once the run was paused."""

        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def set_review_status(self, *args: Any, **kwargs: Any) -> Any:
            changed = store.set_review_status(*args, **kwargs)
            held.released.set()
            paused.set()
            return changed

    held.runner.stop(SignallingStore())  # type: ignore[arg-type]
    assert paused.is_set()
    run = api.get(f"/api/reviews/{run_id}").json()
    assert run["status"] == "paused" and run["active"] is False
    refused = api.post("/api/reviews", json={"reanalyze": True})
    assert refused.status_code == 409 and "shutting down" in refused.json()["detail"]
    assert api.get(f"/api/reviews/{refused_run(api)}").json()["status"] == "paused"


def refused_run(api: Api) -> str:
    """The newest run: the one refused because the server was shutting down."""
    run_id: str = api.get("/api/reviews", params={"limit": 1}).json()["reviews"][0]["run_id"]
    return run_id


def test_the_app_lifespan_stops_the_review_worker(database: Path) -> None:
    api = Api(database)
    with TestClient(api.app, base_url="http://127.0.0.1") as client:
        assert client.post("/api/reviews", json={}).status_code == 202
    runner = review_runner(api.app)
    assert runner.current() is None
    with TestClient(api.app, base_url="http://127.0.0.1") as client:
        refused = client.post("/api/reviews", json={"reanalyze": True})
    assert refused.status_code == 409 and "shutting down" in refused.json()["detail"]


def test_a_review_of_one_project_and_range_records_its_scope(api: Api) -> None:
    project = api.get("/api/projects").json()["projects"][0]
    run = _start(
        api, scope=project["name"], since="2020-01-01T00:00:00", until="2100-01-01T00:00:00Z"
    )
    assert run["scope_key"] == f"project:{project['project_id']}"
    assert run["time_from"].startswith("2020-01-01T00:00:00") and run["time_from"].endswith(
        ("Z", "+00:00")
    )
    review_runner(api.app).wait(timeout=120)
    assert api.get(f"/api/reviews/{run['run_id']}").json()["status"] == "completed"
    clash = api.post("/api/reviews", json={"project": "a", "scope": "b"})
    assert 400 <= clash.status_code < 500 and "project or scope" in clash.json()["detail"]


def test_turning_the_model_off_is_recorded_on_the_run(api: Api) -> None:
    run = _start(api, use_model=False)
    assert run["model"] is None and "turned off" in run["options"]["semantic_note"]
    review_runner(api.app).wait(timeout=120)
