"""The in-process gate: one live supervisor per conversation, fed only events it has not seen."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.errors import ConfigError
from proctor.gate import GateRequest, GateService, History, PolicyCache, decide
from proctor.rules import DEFAULT_POLICY, Event, TraceContext
from tests.gate.helpers import CountsCalls, NoRootRemoval, RepeatsFailedCommand, write_policy
from tests.rules.helpers import assistant, bash, call, trace, user


@pytest.fixture
def known_test_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Policy files may name the test rules (policies accept only rules that exist)."""
    monkeypatch.setattr("proctor.rules.builtin.BUILTIN_RULES", (NoRootRemoval(),))


def _failing_session() -> tuple[TraceContext, tuple[Event, ...]]:
    t = trace(
        user("fix the cart test"),
        assistant("", call("Read", "def test_total(): ...", file_path="tests/test_cart.py")),
        assistant("", bash("pytest -q", "1 failed", exit_code=1)),
    )
    return t.context, t.events


def _request(conversation_id: str, command: str, **fields: object) -> GateRequest:
    return GateRequest.model_validate(
        {
            "conversation_id": conversation_id,
            "tool_name": "Bash",
            "tool_input": {"command": command},
            **fields,
        }
    )


def test_observing_feeds_only_events_the_supervisor_has_not_seen() -> None:
    counter = CountsCalls()
    service = GateService(policy=DEFAULT_POLICY, rules=[counter])
    context, events = _failing_session()
    service.observe(context.conversation_id, events[:4], context=context)
    assert service.events_fed == 4
    service.observe(context.conversation_id, events)  # the whole history again, plus more
    assert service.events_fed == len(events)
    assert [e.source_id for e in counter.observed] == [e.source_id for e in events]
    assert service.events_seen(context.conversation_id) == len(events)


def test_deciding_reads_no_history_and_feeds_nothing() -> None:
    loads: list[str] = []

    def history(request: GateRequest) -> History:
        loads.append(request.conversation_id)
        context, events = _failing_session()
        return History(context=context, events=events)

    counter = CountsCalls()
    service = GateService(policy=DEFAULT_POLICY, rules=[counter], history=history)
    for _ in range(5):
        assert service.decide(_request("conv-a", "ls")).decision == "allow"
    assert loads == ["conv-a"], "the history is loaded once, on the first decision"
    assert service.events_fed == len(counter.observed) == len(_failing_session()[1])


def test_a_decision_sees_events_observed_since_the_last_one() -> None:
    service = GateService(policy=DEFAULT_POLICY, rules=[RepeatsFailedCommand()])
    context, events = _failing_session()
    service.observe(context.conversation_id, events[:-1], context=context)
    assert service.decide(_request(context.conversation_id, "pytest -q")).decision == "allow"
    service.observe(context.conversation_id, events[-1:])  # the failing result arrives
    decision = service.decide(_request(context.conversation_id, "pytest -q"))
    assert (decision.decision, decision.rule) == ("ask", "test_repeats_failed_command")


def test_the_least_recently_used_conversation_is_dropped_and_rebuilt_from_history() -> None:
    loads: list[str] = []

    def history(request: GateRequest) -> History:
        loads.append(request.conversation_id)
        context, events = _failing_session()
        return History(
            context=TraceContext(request.conversation_id, cwd=context.cwd), events=events
        )

    service = GateService(
        policy=DEFAULT_POLICY, rules=[RepeatsFailedCommand()], history=history, max_conversations=2
    )
    for conversation_id in ("a", "b", "a", "c"):
        service.decide(_request(conversation_id, "ls"))
    assert len(service) == 2
    assert "b" not in service and "a" in service and "c" in service
    decision = service.decide(_request("b", "pytest -q"))
    assert decision.decision == "ask", "rebuilt from its history, it still knows the failure"
    assert loads == ["a", "b", "c", "b"]


@pytest.mark.usefixtures("known_test_rules")
def test_the_policy_found_from_the_working_folder_applies(tmp_path: Path) -> None:
    write_policy(tmp_path, '[rules]\ntest_no_root_removal = "ask"\n')
    service = GateService(rules=[NoRootRemoval()])
    decision = service.decide(_request("conv", "rm -rf /", cwd=str(tmp_path / "src")))
    assert (decision.decision, decision.rule) == ("ask", "test_no_root_removal")
    elsewhere = service.decide(_request("other", "rm -rf /", cwd=str(tmp_path.parent)))
    assert elsewhere.decision == "deny"


@pytest.mark.usefixtures("known_test_rules")
def test_an_edited_policy_replays_the_conversation_under_the_new_one(tmp_path: Path) -> None:
    service = GateService(rules=[NoRootRemoval()], policies=PolicyCache(ttl_s=0))
    context, events = _failing_session()
    here = TraceContext(context.conversation_id, cwd=str(tmp_path))
    service.observe(context.conversation_id, events, context=here)
    assert service.decide(_request(context.conversation_id, "rm -rf /")).decision == "deny"
    write_policy(tmp_path, '[rules]\ntest_no_root_removal = "warn"\n')
    decision = service.decide(_request(context.conversation_id, "rm -rf /"))
    assert decision.decision == "allow" and decision.findings
    assert service.events_fed == 2 * len(events)


def test_an_invalid_policy_is_a_question_for_the_user_not_a_crash(tmp_path: Path) -> None:
    write_policy(tmp_path, "rules = 3\n")
    service = GateService(rules=[NoRootRemoval()])
    with pytest.raises(ConfigError):
        service.decide(_request("conv", "ls", cwd=str(tmp_path)))
    decision = decide(_request("conv", "ls", cwd=str(tmp_path)), service=service)
    assert decision.decision == "ask"
    assert "the policy could not be read" in decision.reason


def test_a_service_must_hold_at_least_one_conversation() -> None:
    with pytest.raises(ValueError, match="max_conversations"):
        GateService(max_conversations=0)
