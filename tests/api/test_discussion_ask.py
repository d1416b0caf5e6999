"""``POST /api/results/{ref}/ask`` (UI-5): a question asked of the configured model, answered
with the quoted facts it was given; without a connection, a clear refusal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from proctor.models import set_default_connection
from proctor.store import SqlStore
from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply
from tests.api.conftest import Api


@pytest.fixture
def model(api: Api) -> Iterator[ScriptedModelServer]:
    """The scripted model server, the API's default connection."""
    with ScriptedModelServer() as server:
        store: SqlStore = api.app.state.store_holder.get()
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        yield server


def _result(api: Api) -> str:
    result_id: str = api.get("/api/results").json()["results"][0]["result_id"]
    return result_id


def test_a_question_is_answered_with_the_facts_and_sources_the_model_was_given(
    api: Api, model: ScriptedModelServer
) -> None:
    result_id = _result(api)
    model.push({"answer": "pytest still fails after the rounding fix.", "cited": ["F2", "S1"]})

    response = api.post(
        f"/api/results/{result_id[:8]}/ask", json={"question": "Is anything still failing?"}
    )

    assert response.status_code == 200, response.text
    data = response.json()
    assert data["answer"] == "pytest still fails after the rounding fix."
    assert data["cited"] == ["F2", "S1"]
    assert data["model"] == "scripted/scripted-model" and data["calls"] == 1
    assert data["focus"] == "the whole result" and data["result_id"] == result_id
    facts = {f["ref"]: f for f in data["facts"]}
    sources = {s["ref"]: s for s in data["sources"]}
    assert "F2" in facts and "S1" in sources
    assert {ref for f in data["facts"] for ref in f["sources"]} <= set(sources)
    sent = model.requests[0].body["messages"][1]["content"]
    for fact in data["facts"][:5]:
        assert fact["ref"] in sent
    assert sent.rstrip().endswith("Is anything still failing?")


def test_the_preview_names_the_model_a_question_would_go_to(
    api: Api, model: ScriptedModelServer
) -> None:
    preview = api.post(f"/api/results/{_result(api)}/continue", json={}).json()
    assert preview["ask_model"] == "scripted/scripted-model"
    assert model.requests == []


def test_without_a_connection_asking_is_refused_and_the_preview_offers_none(api: Api) -> None:
    result_id = _result(api)
    assert api.post(f"/api/results/{result_id}/continue", json={}).json()["ask_model"] is None

    refused = api.post(f"/api/results/{result_id}/ask", json={"question": "Why?"})

    assert refused.status_code == 409
    assert "no model connection is configured" in refused.json()["detail"]


def test_a_failing_model_and_bad_questions_are_answered_with_a_sentence(
    api: Api, model: ScriptedModelServer
) -> None:
    result_id = _result(api)
    model.push(ScriptedReply(status=401))
    failed = api.post(f"/api/results/{result_id}/ask", json={"question": "Why?"})
    assert failed.status_code == 502 and "the model call failed (auth)" in failed.json()["detail"]

    for body in ({"question": "   "}, {"question": "x" * 2_001}, {"question": "a", "x": 1}, {}):
        refused = api.post(f"/api/results/{result_id}/ask", json=body)
        assert 400 <= refused.status_code < 500, body
    unknown = api.post("/api/results/ffffffff/ask", json={"question": "Why?"})
    assert unknown.status_code == 404
