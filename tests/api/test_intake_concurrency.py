"""Live intake over real HTTP in bounded time (ING-7): no append waits for another
conversation's, and no answer waits for the model supervision it queues."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from proctor._util.clock import utcnow
from proctor.api import create_app
from proctor.ingest import Intake
from proctor.ingest import _intake as intake_module
from proctor.models import set_default_connection
from proctor.sources import prepare_bundle
from proctor.store import open_store
from proctor.supervision import SessionSettings, enable_supervision, resolve_target
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer
from proctor.transcript import ConversationBundle, PreparedBundle
from tests.loopback import free_port

NDJSON = {"Content-Type": "application/x-ndjson"}
EVENTS_URL = "/api/intake/events"
STORED = 3_000


def lines(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(event).encode() + b"\n" for event in events)


def said(conversation: str, number: int, role: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "conversation_id": conversation,
        "message_id": f"m{number}",
        "role": role,
        "text": text,
    }


def seed(database: Path, sizes: dict[str, int]) -> None:
    store = open_store(database)
    try:
        for name, size in sizes.items():
            roles = ("user", "assistant")
            Intake(store).events(
                lines(*(said(name, n, roles[n % 2], f"step {n}") for n in range(size)))
            )
    finally:
        store.close()


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "proctor.db"


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` under uvicorn on a loopback port, in this process (so tests can hold it)."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    started = threading.Event()
    for _ in range(2_000):
        if server.started or not thread.is_alive():
            break
        started.wait(0.01)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


@pytest.mark.slow
def test_a_small_append_over_http_never_waits_behind_a_large_one(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(database, {"large": STORED, "small": 10})
    holding, release = threading.Event(), threading.Event()
    real = prepare_bundle

    def prepare(bundle: ConversationBundle, *args: Any, **kwargs: Any) -> PreparedBundle:
        if bundle.conversation_id == "pj:large":
            holding.set()
            try:
                release.wait(timeout=120)
            finally:
                holding.clear()
        return real(bundle, *args, **kwargs)

    monkeypatch.setattr(intake_module, "prepare_bundle", prepare)
    large = lines(*(said("large", STORED + n, "user", f"bulk {n}") for n in range(2_000)))
    answers: list[httpx.Response] = []
    app = create_app(lambda: open_store(database), token=None)
    with serving(app) as url:

        def post_large() -> None:
            with httpx.Client(base_url=url, timeout=180) as client:
                answers.append(client.post(EVENTS_URL, content=large, headers=NDJSON))

        sender = threading.Thread(target=post_large)
        sender.start()
        try:
            assert holding.wait(timeout=60), "the large append never reached its preparation"
            small = httpx.post(
                url + EVENTS_URL,
                content=lines(said("small", 10, "assistant", "quick reply")),
                headers=NDJSON,
                timeout=60,
            )
            assert small.status_code == 200, small.text
            assert holding.is_set(), "the small append was answered only after the large one"
        finally:
            release.set()
            sender.join(timeout=180)
    [large_answer] = answers
    assert (large_answer.status_code, large_answer.json()["sources_added"]) == (200, 2_000)
    store = open_store(database)
    try:
        assert store.messages("pj:small")[-1].text == "quick reply"
        assert len(store.messages("pj:large")) == STORED + 2_000
    finally:
        store.close()


def test_an_intake_post_answers_while_the_analysis_it_queued_waits_for_the_model(
    database: Path,
) -> None:
    seed(database, {"run": 2})
    asked, release = threading.Event(), threading.Event()

    def stalled_model(_request: RecordedRequest) -> dict[str, Any]:
        asked.set()
        release.wait(timeout=120)
        return {"decisions": []}

    with ScriptedModelServer(responder=stalled_model) as model:
        store = open_store(database)
        try:
            store.save_connection(model.connection("scripted"))
            set_default_connection(store, "scripted")
            target = resolve_target(store, "pj:run")
            enable_supervision(store, target, SessionSettings(throttle_seconds=0), now=utcnow())
        finally:
            store.close()
        app = create_app(lambda: open_store(database), token=None)
        try:
            with serving(app) as url:
                answer = httpx.post(
                    url + EVENTS_URL,
                    content=lines(said("run", 2, "assistant", "The export is fixed.")),
                    headers=NDJSON,
                    timeout=60,
                )
                # The model has not answered (it cannot before `release`), yet the POST has.
                assert answer.status_code == 200, answer.text
                assert answer.json()["supervision"] == [
                    {
                        "target": "pj:run",
                        "trigger": "none",
                        "status": "queued",
                        "findings": 0,
                        "detail": None,
                    }
                ]
                assert asked.wait(timeout=60), "the queued analysis never asked the model"
                assert [r.status for r in _runs(database)] == ["running"]
                release.set()
                assert app.state.analyses.wait_idle(timeout=60)
        finally:
            release.set()
    [run] = _runs(database)
    assert (run.trigger, run.status) == ("after_reply", "ok")
    assert "The export is fixed." in json.dumps(model.requests[0].body)


def _runs(database: Path) -> list[Any]:
    store = open_store(database)
    try:
        return store.supervision_runs(target_id="pj:run")
    finally:
        store.close()
