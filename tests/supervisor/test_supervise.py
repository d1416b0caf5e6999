"""One supervision call (SPEC SUP-6): validate, repair exactly once, or report unavailable."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from proctor.errors import ModelError
from proctor.models import AttemptUsage, ModelConnection, ModelRequest, PoolLimits, open_caller
from proctor.supervisor import (
    PROMPTS,
    SupervisionOutcome,
    Window,
    build_window,
    prompt_version,
    supervise,
)
from proctor.supervisor._run import REJECTED_CHARS
from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply
from tests.supervisor.builders import Chat, in_memory
from tests.supervisor.scripted import answer, caller_for, data_entries, decision

pytestmark = pytest.mark.anyio
Script = ScriptedReply | dict[str, Any] | str


def claim_window() -> Window:
    """The agent claims success after a failing test run."""
    chat = Chat()
    chat.user("Fix the rounding bug and make sure the tests pass.")
    chat.assistant("Running the tests.")
    chat.tool("Bash", {"command": "pytest -q"}, "1 failed, 3 passed", status="error", exit_code=1)
    chat.assistant("All tests pass, the fix is done.")
    return build_window(in_memory(chat))


def ids(window: Window) -> tuple[str, str]:
    """Window ids of the claim and of the failing run."""
    claim = next(i for i in window.items if "All tests pass" in i.line)
    run = next(i for i in window.items if i.source_type == "tool_call")
    return claim.window_id, run.window_id


class Recorder:
    """Keeps what the caller reports of every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[ModelRequest, tuple[AttemptUsage, ...]]] = []

    def __call__(
        self, connection: ModelConnection, request: ModelRequest, attempts: Sequence[AttemptUsage]
    ) -> None:
        self.calls.append((request, tuple(attempts)))


async def run(server: ScriptedModelServer, window: Window) -> SupervisionOutcome:
    return await supervise(caller_for(server), window, "general", run_id="run-1")


async def test_a_valid_answer_becomes_model_findings_in_one_call() -> None:
    window = claim_window()
    claim, failing = ids(window)
    recorder = Recorder()
    with ScriptedModelServer([answer(decision([claim, failing]))]) as server:
        outcome = await supervise(
            caller_for(server, recorder=recorder), window, "evidence", run_id="run-1"
        )
        sent = server.requests
    assert outcome.status == "ok" and outcome.error is None
    assert (outcome.calls, outcome.input_tokens, outcome.output_tokens) == (1, 100, 20)
    assert outcome.window_chars == window.chars
    assert outcome.prompt_version == prompt_version("evidence")
    [finding] = outcome.findings
    assert (finding.origin, finding.rule, finding.rule_version) == (
        "model",
        "supervisor.evidence",
        prompt_version("evidence"),
    )
    assert finding.conversation_id == "sup:conv-1" and not finding.speculative
    assert [e.source_id for e in finding.evidence] == ["sup:conv-1:m2", "sup:conv-1:c0"]
    assert len(sent) == 1
    assert [m["role"] for m in sent[0].messages] == ["system", "user"]
    assert sent[0].text_of("system") == PROMPTS["evidence"].system
    assert len(data_entries(sent[0])) == len(window.lines)
    [(request, _)] = recorder.calls
    assert (request.stage, request.target_id, request.run_id) == (
        "supervise",
        "sup:conv-1",
        "run-1",
    )


async def test_text_that_is_not_json_gets_exactly_one_repair_call() -> None:
    window = claim_window()
    claim, failing = ids(window)
    recorder = Recorder()
    replies: list[Script] = [
        "Sure! Here is my review: the tests failed.",
        answer(decision([claim, failing])),
    ]
    with ScriptedModelServer(replies) as server:
        outcome = await supervise(caller_for(server, recorder=recorder), window, "general")
        first, repair = server.requests
    assert outcome.status == "ok" and outcome.calls == 2 and len(outcome.findings) == 1
    assert (outcome.input_tokens, outcome.output_tokens) == (200, 40)
    assert [r.stage for r, _ in recorder.calls] == ["supervise", "repair"]
    assert repair.text_of("system") == first.text_of("system") == PROMPTS["general"].system
    repair_text = repair.text_of("user")
    assert "<<<REJECTED-ANSWER " in repair_text
    assert "Sure! Here is my review" in repair_text
    assert "the answer is not one JSON object" in repair_text
    assert len(data_entries(repair)) == len(window.lines)


async def test_an_answer_breaking_the_schema_is_repaired_with_its_errors() -> None:
    window = claim_window()
    claim, failing = ids(window)
    pausing = answer(decision([claim], action="pause"))
    with ScriptedModelServer([pausing, answer(decision([claim, failing]))]) as server:
        outcome = await run(server, window)
        repair = server.requests[1].text_of("user")
    assert outcome.status == "ok" and outcome.calls == 2
    assert "decisions.0.action" in repair
    assert all(f.action not in ("pause", "stop") for f in outcome.findings)


async def test_an_answer_still_invalid_after_the_repair_is_unavailable_never_a_pass() -> None:
    window = claim_window()
    claim, failing = ids(window)
    replies: list[Script] = [
        "not json",
        {"decisions": [{"title": "x"}]},
        answer(decision([claim, failing])),
    ]
    with ScriptedModelServer(replies) as server:
        outcome = await run(server, window)
        requests = len(server.requests)
    assert requests == 2
    assert outcome.status == "unavailable" and outcome.findings == ()
    assert outcome.calls == 2
    assert outcome.error is not None and outcome.error.startswith("invalid answer after one repair")
    assert "decisions.0.action: Field required" in outcome.error


async def test_a_model_that_cannot_be_used_makes_supervision_unavailable() -> None:
    with ScriptedModelServer([ScriptedReply("bad key", status=401)]) as server:
        outcome = await run(server, claim_window())
    assert outcome.status == "unavailable" and outcome.findings == ()
    assert outcome.error is not None and outcome.error.startswith("auth: ")
    assert outcome.calls == 1


async def test_a_failed_repair_call_makes_supervision_unavailable() -> None:
    with ScriptedModelServer(["not json", ScriptedReply("no", status=403)]) as server:
        outcome = await run(server, claim_window())
    assert outcome.status == "unavailable" and outcome.calls == 2
    assert outcome.error is not None and outcome.error.startswith("repair failed: auth: ")


async def test_a_broken_setting_fails_loudly_instead_of_reporting_unavailable() -> None:
    remote = ModelConnection(
        name="remote", provider="openai", model="m", base_url="https://x.test/v1"
    )
    with pytest.raises(ModelError) as raised:
        await supervise(open_caller(remote, limits=PoolLimits()), claim_window(), "general")
    assert raised.value.kind == "config"


async def test_a_missing_key_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUPERVISOR_TEST_KEY", raising=False)
    with ScriptedModelServer([answer()]) as server:
        keyed = server.connection().model_copy(update={"api_key_env": "SUPERVISOR_TEST_KEY"})
        with pytest.raises(ModelError, match="SUPERVISOR_TEST_KEY") as raised:
            await supervise(open_caller(keyed, limits=PoolLimits()), claim_window(), "general")
    assert raised.value.kind == "config"


async def test_cancellation_propagates_and_produces_no_outcome() -> None:
    received = threading.Event()

    def stall(_request: object) -> ScriptedReply:
        received.set()
        return ScriptedReply(answer(), stall_s=30)

    outcomes: list[SupervisionOutcome] = []
    with ScriptedModelServer(responder=stall) as server:
        caller = caller_for(server)

        async def supervised() -> None:
            outcomes.append(await supervise(caller, claim_window(), "general"))

        async with anyio.create_task_group() as group:
            group.start_soon(supervised)
            await anyio.to_thread.run_sync(received.wait)
            group.cancel_scope.cancel()
    assert outcomes == []


async def test_continue_decisions_and_an_empty_answer_produce_no_findings() -> None:
    window = claim_window()
    claim, _ = ids(window)
    replies = [answer(decision([claim], action="continue")), answer()]
    with ScriptedModelServer(replies) as server:
        first = await run(server, window)
        second = await run(server, window)
    assert first.status == second.status == "ok"
    assert first.findings == second.findings == ()
    assert len(first.decisions) == 1 and second.decisions == ()


async def test_the_repair_call_quotes_a_huge_rejected_answer_only_in_part() -> None:
    window = claim_window()
    with ScriptedModelServer(["x" * 200_000, answer()]) as server:
        outcome = await run(server, window)
        repair = server.requests[1].text_of("user")
    assert outcome.status == "ok" and outcome.calls == 2
    assert "characters omitted" in repair
    assert len(repair) < window.chars + REJECTED_CHARS + 1_000
