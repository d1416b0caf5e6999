"""The engine passes each rule only the kinds of event it watches."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from proctor.rules import (
    DEFAULT_POLICY,
    Event,
    EventKind,
    Hit,
    Policy,
    Rule,
    RuleContext,
    Supervisor,
    check_trace,
)
from proctor.rules.builtin import builtin_rules
from proctor.transcript import ToolCall
from tests.rules.helpers import assistant, bash, trace, user


class _Recorder(Rule):
    """Reports, when the run finishes, the kinds of event it was shown."""

    id = "recorder"
    category = "quality"
    description = "test rule"

    def start(self, context: RuleContext) -> list[str]:
        return []

    def observe(self, state: list[str], event: Event, context: RuleContext) -> Iterable[Hit]:
        state.append(event.kind)
        return ()

    def finish(self, state: list[str], context: RuleContext) -> Iterable[Hit]:
        return [Hit(title="seen", severity="low", evidence=(), actual=list(state))]


class _ResultsOnly(_Recorder):
    observes = frozenset({"result"})


class _Idle(_Recorder):
    def watches(self, context: RuleContext) -> frozenset[EventKind]:
        return frozenset()

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return [Hit(title="asked", severity="low", evidence=())]


def _seen(rule: Rule) -> Any:
    t = trace(user("run the tests"), assistant("On it.", bash("pytest", "1 passed")))
    (finding,) = check_trace(t, DEFAULT_POLICY, [rule])
    return finding.actual


def test_a_rule_sees_every_event_unless_it_says_otherwise() -> None:
    assert _seen(_Recorder()) == ["message", "message", "call", "result"]


def test_a_rule_sees_only_the_kinds_it_observes() -> None:
    assert _seen(_ResultsOnly()) == ["result"]


def test_a_rule_watching_nothing_is_idle_it_neither_finishes_nor_answers_the_gate() -> None:
    t = trace(user("run the tests"), assistant("On it.", bash("pytest", "1 passed")))
    assert check_trace(t, DEFAULT_POLICY, [_Idle()]) == []
    supervisor = Supervisor(t.context, DEFAULT_POLICY, [_Idle()])
    decision = supervisor.before_call(ToolCall(source_id="proposed", name="Bash", arguments={}))
    assert decision.findings == ()


_GATE_PROBES = (
    ToolCall(source_id="p1", name="Bash", arguments={"command": "rm -rf /etc/passwd"}),
    ToolCall(source_id="p2", name="Write", arguments={"file_path": "/elsewhere/x.py"}),
    ToolCall(source_id="p3", name="Read", arguments={"file_path": "/other/project/a.py"}),
    ToolCall(source_id="p4", name="send_money", arguments={"recipient": "x", "amount": 5}),
)


def test_a_builtin_rule_idle_under_a_policy_has_nothing_to_say_at_the_gate_or_the_end() -> None:
    # The engine skips idle rules entirely; this holds that skipping them loses nothing.
    t = trace(user("run the tests"), assistant("On it.", bash("pytest", "1 passed")))
    idle = 0
    for rule in builtin_rules():
        context = RuleContext(DEFAULT_POLICY, t.context)
        if rule.active(DEFAULT_POLICY) and rule.watches(context):
            continue
        idle += 1
        state = rule.start(context)
        for probe in _GATE_PROBES:
            assert list(rule.before_call(state, probe, context)) == [], (rule.id, probe.name)
        assert list(rule.finish(state, context)) == [], rule.id
    assert idle >= 5  # budgets without limits, no plan, no hard stops, no schemas


def test_every_builtin_rule_observes_kinds_of_event_that_exist() -> None:
    for rule in builtin_rules():
        assert rule.observes and rule.observes <= {"message", "call", "result"}, rule.id


class _ActiveInAskMode(_Recorder):
    def active(self, policy: Policy) -> bool:
        return policy.mode == "ask"


def test_a_rule_inactive_under_a_policy_is_idle_and_each_policy_is_asked() -> None:
    t = trace(user("run the tests"), assistant("On it.", bash("pytest", "1 passed")))
    rule = _ActiveInAskMode()
    assert check_trace(t, DEFAULT_POLICY, [rule]) == []
    (finding,) = check_trace(t, Policy(mode="ask"), [rule])
    assert finding.actual == ["message", "message", "call", "result"]
    assert check_trace(t, DEFAULT_POLICY, [rule]) == []  # the earlier answer still holds


def test_a_rule_switched_off_by_the_policy_is_not_run() -> None:
    t = trace(user("run the tests"), assistant("On it.", bash("pytest", "1 passed")))
    assert check_trace(t, Policy(rules={"recorder": "off"}), [_Recorder()]) == []
    assert len(check_trace(t, Policy(rules={"recorder": "warn"}), [_Recorder()])) == 1
