"""Making suggestions from a result: the cost law, the phrasing call, failure and retry.

SPEC HB-4: no candidates → no call; candidates → exactly one phrasing call; no model →
rule text and no call. HB-5: unknown refs are dropped, missing phrasing falls back to
rule text. HB-6: a failed phrasing leaves the published result intact and is retried
alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.errors import SuggestionError
from proctor.heartbeat.suggestions import (
    PHRASING_SYSTEM,
    Phrasing,
    make_suggestions,
    open_phrasing,
    retry_suggestions,
)
from proctor.models import set_default_connection
from proctor.store import SqlStore, open_store
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer, ScriptedReply
from tests.heartbeat.suggestions.builders import (
    add_heartbeat,
    phrase_all,
    publish,
    quiet,
    refs_of,
    reviewed,
)
from tests.models.helpers import fast_caller
from tests.store.graph_drafts import digest

Responder = Callable[[RecordedRequest], "ScriptedReply | dict[str, Any] | str"]


class Answers:
    """The server's responder, swappable by a test."""

    def __init__(self) -> None:
        self.respond: Responder = phrase_all

    def __call__(self, request: RecordedRequest) -> ScriptedReply | dict[str, Any] | str:
        return self.respond(request)


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def server(answers: Answers) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(responder=answers) as running:
        yield running


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "proctor.db")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def phrasing(server: ScriptedModelServer) -> Phrasing:
    return Phrasing(fast_caller(server.connection("scripted"), retry_delay_s=0))


def test_candidates_cost_exactly_one_phrasing_call(
    store: SqlStore, server: ScriptedModelServer, phrasing: Phrasing
) -> None:
    result_id = reviewed(store)
    outcome = make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=phrasing)
    assert len(server.requests) == 1
    assert outcome.calls == 1
    assert (outcome.input_tokens, outcome.output_tokens) == (100, 20)
    assert outcome.created == outcome.candidates == outcome.phrased > 0
    (request,) = server.requests
    assert request.text_of("system") == PHRASING_SYSTEM
    assert "pytest still failing" not in request.text_of("system")
    assert "pytest still failing" in request.text_of("user"), "candidates only in the data"
    assert refs_of(request) == [f"c{n}" for n in range(1, outcome.candidates + 1)]
    assert all(s.phrased and s.text.startswith("Phrased c") for s in store.suggestions())


def test_a_result_without_candidates_costs_no_call(
    store: SqlStore, server: ScriptedModelServer, phrasing: Phrasing
) -> None:
    outcome = make_suggestions(
        store, result_id=publish(store, quiet), heartbeat_id=None, phrasing=phrasing
    )
    assert outcome.candidates == outcome.calls == outcome.created == 0
    assert server.requests == []


def test_without_a_model_the_rule_text_is_saved_and_no_call_is_made(
    store: SqlStore, server: ScriptedModelServer
) -> None:
    assert open_phrasing(store) is None
    outcome = make_suggestions(store, result_id=reviewed(store), heartbeat_id=None, phrasing=None)
    assert outcome.calls == 0
    assert outcome.created == outcome.candidates > 0
    assert server.requests == []
    saved = store.suggestions()
    assert all(not s.phrased and s.text == s.rule_text for s in saved)
    assert any(s.text.startswith("Open: pytest still failing") for s in saved)


@pytest.mark.slow
def test_the_default_connection_phrases_and_its_usage_is_recorded(
    store: SqlStore, server: ScriptedModelServer
) -> None:
    store.save_connection(server.connection("scripted"))
    set_default_connection(store, "scripted")
    phrasing = open_phrasing(store)
    assert phrasing is not None
    result_id = reviewed(store)
    make_suggestions(store, result_id=result_id, heartbeat_id="hb-1", phrasing=phrasing)
    usage = store.model_usage(run_id="hb-1")
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 100, 20)


def test_unknown_refs_are_dropped_and_missing_phrasing_falls_back_to_rule_text(
    store: SqlStore, answers: Answers, phrasing: Phrasing
) -> None:
    answers.respond = lambda request: {
        "suggestions": [
            {"ref": "c1", "title": "Fix the failing run", "text": "Phrased c1."},
            {"ref": "c99", "title": "Invented", "text": "Not offered."},
            {"ref": "ignore all rules", "title": "x", "text": "y"},
        ]
    }
    outcome = make_suggestions(
        store, result_id=reviewed(store), heartbeat_id=None, phrasing=phrasing
    )
    assert outcome.calls == 1
    assert outcome.phrased == 1
    saved = store.suggestions(limit=100)
    assert len(saved) == outcome.candidates
    assert [s.text for s in saved if s.phrased] == ["Phrased c1."]
    assert all(s.text == s.rule_text for s in saved if not s.phrased)
    assert not any("Not offered" in s.text for s in saved)


def test_an_invalid_answer_gets_one_repair_then_counts_both_calls(
    store: SqlStore, server: ScriptedModelServer, answers: Answers, phrasing: Phrasing
) -> None:
    replies = iter(['{"suggestions": "nope"}'])
    answers.respond = lambda request: next(replies, None) or phrase_all(request)
    outcome = make_suggestions(
        store, result_id=reviewed(store), heartbeat_id=None, phrasing=phrasing
    )
    assert outcome.calls == len(server.requests) == 2
    assert "REJECTED-ANSWER" in server.requests[1].text_of("user")
    assert outcome.phrased == outcome.candidates


@pytest.mark.slow
def test_a_phrasing_failure_leaves_the_result_intact_and_is_retried_alone(
    store: SqlStore, server: ScriptedModelServer, answers: Answers, phrasing: Phrasing
) -> None:
    result_id = reviewed(store)
    heartbeat_id = add_heartbeat(store, result_id, status="running")
    before = digest(store)
    checkpoints = store.checkpoint_count("structural")
    answers.respond = lambda request: ScriptedReply(status=500, content="boom")
    with pytest.raises(SuggestionError, match="the phrasing call failed") as failed:
        make_suggestions(store, result_id=result_id, heartbeat_id=heartbeat_id, phrasing=phrasing)
    assert failed.value.calls == 1
    assert digest(store) == before, "result, graph and checkpoints untouched"
    assert store.checkpoint_count("structural") == checkpoints
    assert store.suggestions(status=None) == []

    answers.respond = phrase_all
    reviews = len(store.review_runs(limit=100))
    calls = len(server.requests)
    outcome = retry_suggestions(store, heartbeat_id, phrasing)
    assert len(server.requests) == calls + 1, "only the phrasing call, no review"
    assert len(store.review_runs(limit=100)) == reviews
    assert digest(store) == before
    run = store.heartbeat_run(heartbeat_id)
    assert (run.status, run.phase, run.suggestions) == ("completed", "done", outcome.created)
    assert outcome.created == outcome.candidates > 0


def test_a_failed_retry_keeps_the_heartbeat_marked_as_suggestions_failed(
    store: SqlStore, answers: Answers, phrasing: Phrasing
) -> None:
    heartbeat_id = add_heartbeat(store, reviewed(store))
    answers.respond = lambda request: ScriptedReply(status=500, content="boom")
    with pytest.raises(SuggestionError):
        retry_suggestions(store, heartbeat_id, phrasing)
    run = store.heartbeat_run(heartbeat_id)
    assert run.status == "suggestions_failed"
    assert run.error is not None and "phrasing call failed" in run.error


def test_the_candidates_are_sent_as_encoded_data_lines(
    store: SqlStore, server: ScriptedModelServer, phrasing: Phrasing
) -> None:
    make_suggestions(store, result_id=reviewed(store), heartbeat_id=None, phrasing=phrasing)
    user = server.requests[0].text_of("user").splitlines()
    assert user[0].startswith("<<<OBSERVED-DATA ")
    assert user[-1].startswith("<<<END OBSERVED-DATA ")
    first = json.loads(user[1])
    assert set(first) == {"ref", "kind", "title", "rule_text"}
