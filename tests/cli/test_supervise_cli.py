"""``proctor supervise`` end to end on the bundled examples and the scripted model (SUP-1, SUP-2, SUP-9)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.cli.supervise import outcome_line
from proctor.models import set_default_connection
from proctor.store import open_store
from proctor.store._supervision_store import SupervisionRun
from proctor.supervision import AnalysisResult, ScheduleOutcome, Target
from proctor.testing.scripted_model import ScriptedModelServer
from tests.conftest import EXAMPLES_DIR

SESSION = "62154fe7"
FINDING: dict[str, Any] = {
    "decisions": [
        {
            "action": "warn",
            "category": "evidence_gap",
            "severity": "medium",
            "title": "The export failure is left unexplained",
            "content": "The agent reports the lock but never checks which process holds it.",
            "evidence": ["target"],
            "confidence": 0.6,
        }
    ]
}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def ingested() -> None:
    assert run("ingest", str(EXAMPLES_DIR)).exit_code == 0


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        store = open_store()
        store.save_connection(scripted.connection("scripted"))
        set_default_connection(store, "scripted")
        store.close()
        yield scripted


def status(*args: str) -> dict[str, Any]:
    result = run("supervise", "status", *args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


@pytest.mark.usefixtures("ingested")
def test_nothing_is_supervised_until_enabled_and_disable_keeps_the_session() -> None:
    assert "No target is supervised" in run("supervise", "status").output
    enabled = run(
        "supervise", "enable", SESSION, "--trigger", "after_reply", "--trigger", "key_event"
    )
    assert enabled.exit_code == 0, enabled.output
    assert "mode general, triggers after_reply, key_event, throttle 30 s" in enabled.output
    assert "no default model connection" in enabled.output, "the broken setting is named at once"
    [session] = status()["sessions"]
    assert (session["state"], session["session"]["triggers"]) == (
        "active",
        ["after_reply", "key_event"],
    )
    assert status()["connection_error"].startswith("no default model connection")
    assert run("supervise", "disable", SESSION).exit_code == 0
    assert status(SESSION)["sessions"][0]["state"] == "disabled"
    assert "disabled" in run("supervise", "status").output


@pytest.mark.usefixtures("ingested")
def test_run_prints_findings_then_stops_at_the_budget(server: ScriptedModelServer) -> None:
    server.push(FINDING)
    assert (
        run("supervise", "enable", SESSION, "--mode", "evidence", "--budget-calls", "1").exit_code
        == 0
    )
    first = run("supervise", "run", SESSION)
    assert first.exit_code == 0, first.output
    assert "The export failure is left unexplained" in first.output
    assert "1 finding(s) · mode evidence" in first.output
    second = run("supervise", "run", SESSION)
    assert second.exit_code == 1
    assert "its supervision budget is spent — 1 of 1 calls" in second.output
    assert f"To raise it: proctor supervise enable {SESSION} --mode evidence --budget-calls 2" in (
        second.output
    )
    assert len(server.requests) == 1
    [session] = status(SESSION)["sessions"]
    assert session["state"] == "paused: budget"
    assert session["last_run"]["status"] == "ok"
    listed = run("findings", "list", "--json")
    assert "The export failure is left unexplained" in listed.output


@pytest.mark.usefixtures("ingested")
def test_a_spent_token_budget_refuses_with_exit_1_and_says_when_it_resets_and_how_to_raise_it(
    server: ScriptedModelServer,
) -> None:
    server.push({"decisions": []}, {"decisions": []})  # 100 in + 20 out tokens each
    settings = ("--mode", "evidence", "--throttle", "5m", "--budget-tokens", "50", "--period", "2h")
    assert run("supervise", "enable", SESSION, *settings).exit_code == 0
    assert run("supervise", "run", SESSION).exit_code == 0
    refused = run("supervise", "run", SESSION)
    assert refused.exit_code == 1
    assert "its supervision budget is spent — " in refused.output
    assert "120 of 50 tokens used this period" in refused.output
    [session] = status(SESSION)["sessions"]
    resets = datetime.fromisoformat(session["period_ends_at"]).astimezone(UTC)
    assert f"it resets at {resets:%Y-%m-%d %H:%M:%S} UTC" in refused.output
    as_json = run("supervise", "run", SESSION, "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.output)["refused"] == "budget"
    assert len(server.requests) == 1
    hint = refused.output.split("To raise it: proctor ", 1)[1].split()
    assert hint == ["supervise", "enable", SESSION, "--mode", "evidence", "--throttle", "300s",
                    "--budget-tokens", "240", "--period", "7200s"]  # fmt: skip
    assert run(*hint).exit_code == 0
    [raised] = status(SESSION)["sessions"]
    kept = ("mode", "throttle_seconds", "budget_period_seconds", "budget_calls")
    assert {k: raised["session"][k] for k in kept} == {k: session["session"][k] for k in kept}
    assert raised["session"]["budget_tokens"] == 240
    again = run("supervise", "run", SESSION)
    assert again.exit_code == 0, again.output
    assert len(server.requests) == 2


@pytest.mark.usefixtures("ingested")
def test_run_reports_an_unavailable_model_with_exit_status_1(server: ScriptedModelServer) -> None:
    server.push("not JSON", "not JSON either", "still not", "nor this")
    result = run("supervise", "run", SESSION)
    assert result.exit_code == 1
    assert result.output.startswith("supervision unavailable: invalid answer after one repair")
    as_json = run("supervise", "run", SESSION, "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.output)["run"]["status"] == "unavailable"


@pytest.mark.usefixtures("ingested")
def test_run_without_a_usable_connection_fails_with_the_setting_to_fix() -> None:
    result = run("supervise", "run", SESSION)
    assert result.exit_code == 2
    assert "no default model connection is set" in result.output
    store = open_store()
    [failed] = store.supervision_runs()
    store.close()
    assert failed.status == "failed"


@pytest.mark.usefixtures("ingested")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("enable", "run:nightly-7"), "automation runs arrive with heartbeat plans"),
        (("enable", "task:no-such-task"), "no task matches 'no-such-task'"),
        (("enable", "no-such-conversation"), "no conversation matches"),
        (("enable", SESSION, "--trigger", "manual", "--trigger", "after_reply"), "manual trigger"),
        (("enable", SESSION, "--trigger", "after_reply", "--every", "5"), "--every N goes with"),
        (("disable", SESSION), "is not supervised"),
    ],
)
def test_mistakes_are_usage_errors(args: tuple[str, ...], message: str) -> None:
    result = run("supervise", *args)
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.usefixtures("ingested")
def test_enable_accepts_durations_limits_and_tasks() -> None:
    store = open_store()
    conversation_id = store.resolve_conversation_id("codex:")
    task_id = store.transcript(conversation_id).tasks[0].task_id
    store.close()
    result = run(
        "supervise", "enable", f"task:{task_id}", "--every", "4", "--throttle", "2m",
        "--budget-calls", "none", "--budget-tokens", "50000", "--period", "1d",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        "triggers every_n_steps, throttle 2 m, budget unlimited calls and 50,000 tokens per 24 h"
        in result.output
    )
    [session] = status(f"task:{task_id}")["sessions"]
    assert session["target"] == f"task:{task_id}"
    assert session["session"]["every_n_steps"] == 4


def test_automatic_outcomes_read_as_one_line_each() -> None:
    target = Target("task", "t-1", "c-1")
    started = datetime(2026, 11, 20, tzinfo=UTC)

    def ran(status: str, error: str | None = None) -> ScheduleOutcome:
        run = SupervisionRun(
            "r", "s", "t-1", "after_reply", "general", status, started, error=error, findings=2
        )
        return ScheduleOutcome(target, "after_reply", result=AnalysisResult(run=run))

    assert outcome_line(ran("ok")) == "supervision of task:t-1 (after_reply): 2 finding(s)"
    assert outcome_line(ran("unavailable", "timeout: slow")).endswith(
        "supervision unavailable: timeout: slow"
    )
    assert outcome_line(ran("failed", "pinned to 'x'")).endswith("failed — pinned to 'x'")
    throttled = ScheduleOutcome(target, "key_event", refused="throttled")
    assert outcome_line(throttled) == "supervision of task:t-1: pending (throttled)"
    paused = ScheduleOutcome(target, "key_event", refused="budget")
    assert outcome_line(paused) == "supervision of task:t-1: supervision paused: budget"
