"""Analyses against the scripted model server (SPEC SUP-1…SUP-9, MOD-2, MOD-3).

Real HTTP on loopback, a real SQLite store, a ``ManualClock``: an ingested conversation
gets one request per due analysis, findings are stored with origin ``model``, spent
budgets stop requests until the next period, and outages and broken settings are
recorded as what they are — never as a pass.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.ingest import ingest
from proctor.models import pin_supervisor, set_default_connection
from proctor.store import SqlStore, open_store
from proctor.supervision import (
    ScheduleOutcome,
    SessionSettings,
    enable_supervision,
    on_conversations_changed,
    resolve_target,
    run_due_analyses,
    session_status,
)
from proctor.supervisor import INTENT_SYSTEM_PROMPT
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer, ScriptedReply
from tests.conftest import EXAMPLES_DIR
from tests.supervision.helpers import Live, ManualClock

SESSION_ID = "62154fe7-682b-4c07-870b-f97d004574c6"
CLAUDE_FOLDER = "claude-code/-home-dev-projects-invoice-service"

WARNING: dict[str, Any] = {
    "decisions": [
        {
            "action": "warn",
            "category": "evidence_gap",
            "severity": "medium",
            "title": "Claims all tests pass without a final test run",
            "content": "The summary says all tests pass; no test run follows the last change.",
            "evidence": ["target"],
            "confidence": 0.7,
            "suggested_actions": ["run pytest"],
        }
    ]
}
NOTHING: dict[str, Any] = {"decisions": []}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "p.db")
    yield opened
    opened.close()


@pytest.fixture
def server(store: SqlStore) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(responder=lambda _request: NOTHING) as scripted:
        store.save_connection(scripted.connection("scripted"))
        set_default_connection(store, "scripted")
        yield scripted


@pytest.fixture
def live(store: SqlStore, clock: ManualClock) -> Live:
    conversation = Live(clock).user("Fix the invoice rounding.").reply("On it.")
    conversation.save(store)
    return conversation


def supervise(store: SqlStore, live: Live, **settings: Any) -> None:
    values: dict[str, Any] = {"triggers": ("after_reply",), **settings}
    target = resolve_target(store, live.conversation_id)
    enable_supervision(store, target, SessionSettings(**values), now=live.clock.now())


def turn(store: SqlStore, live: Live, clock: ManualClock, text: str) -> list[ScheduleOutcome]:
    live.user(f"next: {text}").reply(text).save(store)
    return on_conversations_changed(store, [live.conversation_id], clock=clock)


def _append_turn(path: Path, prompt: str, answer: str) -> None:
    """Append a user prompt and an assistant reply in Claude Code's own JSONL format."""
    last = json.loads(path.read_text().splitlines()[-1])
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": last["cwd"],
        "sessionId": SESSION_ID,
        "version": last["version"],
    }
    user = {
        **common,
        "parentUuid": last["uuid"],
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "uuid": "9f0c3a52-0000-4000-8000-000000000001",
        "timestamp": "2026-02-17T09:50:00.000Z",
    }
    assistant = {
        **common,
        "parentUuid": user["uuid"],
        "type": "assistant",
        "message": {
            "model": "claude-opus-4-6",
            "id": "msg_live_reply",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 20},
        },
        "uuid": "9f0c3a52-0000-4000-8000-000000000002",
        "timestamp": "2026-02-17T09:50:05.000Z",
    }
    with path.open("a") as file:
        file.write(json.dumps(user) + "\n" + json.dumps(assistant) + "\n")


def test_an_ingested_reply_makes_one_request_and_a_stored_model_finding(
    tmp_path: Path, store: SqlStore, clock: ManualClock
) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(EXAMPLES_DIR / CLAUDE_FOLDER, folder)
    first = ingest(store, [folder])
    conversation_id = store.resolve_conversation_id(SESSION_ID)
    enable_supervision(
        store,
        resolve_target(store, conversation_id),
        SessionSettings(mode="evidence", triggers=("after_reply",)),
        now=clock.now(),
    )
    with ScriptedModelServer([WARNING]) as server:
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        assert on_conversations_changed(store, first.conversation_ids, clock=clock) == []
        _append_turn(folder / f"{SESSION_ID}.jsonl", "Did the export work?", "No, still locked.")
        again = ingest(store, [folder])
        [outcome] = on_conversations_changed(store, again.conversation_ids, clock=clock)
        assert len(server.requests) == 1
        assert "No, still locked." in server.requests[0].text_of("user")
    assert outcome.trigger == "after_reply"
    assert outcome.result is not None and outcome.result.run.status == "ok"
    run = store.supervision_runs(target_id=conversation_id)[0]
    assert (run.status, run.findings, run.connection, run.mode) == ("ok", 1, "scripted", "evidence")
    assert (run.input_tokens, run.output_tokens) == (100, 20)
    found, _ = store.findings(conversation_ids=[conversation_id])
    [model_finding] = [f for f in found if f.origin == "model"]
    assert model_finding.title == "Claims all tests pass without a final test run"


@pytest.mark.parametrize(
    ("budget", "runs_allowed"),
    [({"budget_calls": 2}, 2), ({"budget_tokens": 150}, 2), ({"budget_tokens": 100}, 1)],
)
def test_a_spent_budget_pauses_the_session_and_stops_requests_until_the_next_period(
    store: SqlStore,
    clock: ManualClock,
    server: ScriptedModelServer,
    live: Live,
    budget: dict[str, int],
    runs_allowed: int,
) -> None:
    supervise(store, live, throttle_seconds=0, budget_period_seconds=3600, **budget)
    for n in range(runs_allowed):
        [outcome] = turn(store, live, clock, f"reply {n}")
        assert outcome.result is not None
        clock.advance(1)
    [paused] = turn(store, live, clock, "one too many")
    assert paused.refused == "budget"
    assert len(server.requests) == runs_allowed
    session = store.supervision_session(live.conversation_id)
    assert session is not None and session.state == "paused: budget" and session.pending
    paused_status = session_status(store, session, now=clock.now())
    assert paused_status.state == "paused: budget"
    assert paused_status.due_at == paused_status.period_ends_at, "pending until the period ends"
    assert turn(store, live, clock, "still paused")[0].refused == "budget"
    assert run_due_analyses(store, clock=clock)[0].refused == "budget"
    assert len(server.requests) == runs_allowed

    clock.advance(3600)
    [resumed] = run_due_analyses(store, clock=clock)
    assert resumed.result is not None and resumed.result.run.status == "ok"
    assert len(server.requests) == runs_allowed + 1
    assert "still paused" in server.requests[-1].text_of("user")
    session = store.supervision_session(live.conversation_id)
    assert session is not None and (session.state, session.pending) == ("active", False)


def test_an_unavailable_model_is_recorded_as_unavailable_and_shown_never_as_a_pass(
    store: SqlStore, clock: ManualClock, live: Live
) -> None:
    supervise(store, live)
    with ScriptedModelServer(["this is not JSON", "still not JSON"]) as server:
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        [outcome] = turn(store, live, clock, "done")
        assert len(server.requests) == 2, "one answer and exactly one repair"
    assert outcome.result is not None
    run = outcome.result.run
    assert (run.status, run.findings) == ("unavailable", 0)
    assert run.error is not None and "invalid answer after one repair" in run.error
    session = store.supervision_session(live.conversation_id)
    assert session is not None
    status = session_status(store, session, now=clock.now())
    assert status.last_run is not None and status.last_run.status == "unavailable"


def test_a_broken_pinned_connection_fails_the_run_with_the_setting_to_fix(
    store: SqlStore, clock: ManualClock, server: ScriptedModelServer, live: Live
) -> None:
    supervise(store, live)
    pin_supervisor(store, "gone")
    [outcome] = turn(store, live, clock, "done")
    assert outcome.result is not None and outcome.result.config_error
    run = outcome.result.run
    assert run.status == "failed"
    assert run.error is not None and "pinned to connection 'gone'" in run.error
    assert "proctor supervisor model" in run.error
    assert server.requests == [], "never a fallback to the default connection"


def test_the_connection_is_resolved_once_per_execution(
    store: SqlStore, clock: ManualClock, live: Live
) -> None:
    supervise(store, live)

    def switch_then_fail(_request: object) -> ScriptedReply:
        set_default_connection(store, "second")  # the settings change while the run goes on
        return ScriptedReply(content="not JSON")

    with (
        ScriptedModelServer(responder=switch_then_fail) as first,
        ScriptedModelServer([NOTHING]) as second,
    ):
        store.save_connection(first.connection("first"))
        store.save_connection(second.connection("second"))
        set_default_connection(store, "first")
        [outcome] = turn(store, live, clock, "done")
        assert len(first.requests) == 2, (
            "the repair call went to the connection resolved at the start"
        )
        assert second.requests == []
    assert outcome.result is not None and outcome.result.run.connection == "first"


def test_goal_mode_classifies_the_new_turn_with_the_model_and_sends_the_goal(
    store: SqlStore, clock: ManualClock, live: Live
) -> None:
    def answer(request: RecordedRequest) -> dict[str, Any]:
        if request.text_of("system") == INTENT_SYSTEM_PROMPT:
            return {"intent": "correct", "confidence": 0.9}
        return NOTHING

    supervise(store, live, mode="goal")
    with ScriptedModelServer(responder=answer) as server:
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        live.user("Actually, round half-even, not half-up.").reply("Switching.").save(store)
        [outcome] = on_conversations_changed(store, [live.conversation_id], clock=clock)
        intents = [r for r in server.requests if r.text_of("system") == INTENT_SYSTEM_PROMPT]
        supervisions = [r for r in server.requests if r not in intents]
    assert outcome.result is not None and outcome.result.run.status == "ok"
    assert len(intents) == 1 and "round half-even" in intents[0].text_of("user")
    [label] = [x for x in store.intent_labels(live.conversation_id) if x.model is not None]
    assert (label.intent, label.low_confidence) == ("correct", False)
    goal = store.current_goal(live.conversation_id)
    assert goal is not None and goal.version == 2 and "half-even" in goal.goal
    [sent] = supervisions
    assert "half-even" in sent.text_of("user"), "the window carries the corrected goal"


def test_other_modes_classify_turns_without_spending_model_calls(
    store: SqlStore, clock: ManualClock, server: ScriptedModelServer, live: Live
) -> None:
    supervise(store, live, mode="evidence")
    live.user("Actually, round half-even, not half-up.").reply("Switching.").save(store)
    on_conversations_changed(store, [live.conversation_id], clock=clock)
    assert [r.text_of("system") == INTENT_SYSTEM_PROMPT for r in server.requests] == [False]
    labels = store.intent_labels(live.conversation_id)
    assert labels and all(label.model is None for label in labels)
