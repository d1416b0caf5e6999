"""Budgets (SPEC SUP-4, SUP-5): a warning at warn_ratio, a pause at 100 %, each once, and a
gate that refuses calls past the budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from proctor.rules import DEFAULT_POLICY, Policy, Rule, Supervisor, Trace, check_trace
from proctor.rules.builtin import budgets
from proctor.rules.builtin.budgets import (
    ArtifactBudget,
    SubtaskBudget,
    TokenBudget,
    ToolCallBudget,
    WallTimeBudget,
)
from proctor.sources import prepare_bundle, read_paths
from proctor.transcript import ConversationBundle, Usage
from tests.conftest import EXAMPLES_DIR
from tests.rules.helpers import (
    CallSpec,
    MessageSpec,
    assistant,
    bash,
    call,
    findings,
    gate,
    trace,
    user,
)

SOURCE = "/repo/.proctor/policy.toml"


def limits(**values: Any) -> Policy:
    return Policy.model_validate({"budgets": values, "source": SOURCE})


def reads(n: int) -> list[CallSpec]:
    return [call("Read", "x", file_path=f"f{i}.py") for i in range(n)]


def spent(tokens: int) -> MessageSpec:
    return assistant("thinking aloud", usage=Usage(input_tokens=tokens - 10, output_tokens=10))


@dataclass(frozen=True)
class Crossing:
    title: str
    severity: str
    action: str
    actual: float
    threshold: float
    cites: str
    """``call:N`` (the N-th call, from 1) or ``message:N`` (the N-th message)."""


@dataclass(frozen=True)
class Case:
    name: str
    rule: Rule
    steps: tuple[MessageSpec, ...]
    policy: Policy
    expect: tuple[Crossing, ...] = ()
    minutes_apart: float = 1.0


def warn(title: str, actual: float, threshold: float, cites: str) -> Crossing:
    return Crossing(title, "medium", "warn", actual, threshold, cites)


def pause(title: str, actual: float, threshold: float, cites: str) -> Crossing:
    return Crossing(title, "high", "pause", actual, threshold, cites)


CASES = [
    Case(
        "tool calls warn at 80 % and pause at 100 %, once each",
        ToolCallBudget(),
        (user("go"), assistant("", *reads(7))),
        limits(tool_calls=5),
        (
            warn("Tool call budget at 80 %: 4 of 5 calls", 4, 4, "call:4"),
            pause("Tool call budget used up: 5 of 5 calls", 5, 5, "call:5"),
        ),
    ),
    Case(
        "tool calls under the warning level are silent",
        ToolCallBudget(),
        (user("go"), assistant("", *reads(3))),
        limits(tool_calls=5),
    ),
    Case(
        "failed calls count too",
        ToolCallBudget(),
        (user("go"), assistant("", bash("x", "boom", exit_code=1), bash("y", "boom", exit_code=1))),
        limits(tool_calls=2, warn_ratio=0.5),
        (
            warn("Tool call budget at 50 %: 1 of 2 calls", 1, 1, "call:1"),
            pause("Tool call budget used up: 2 of 2 calls", 2, 2, "call:2"),
        ),
    ),
    Case(
        "tokens are summed from usage and cite the reply that crossed",
        TokenBudget(),
        (user("go"), spent(500), spent(400), spent(300), spent(50)),
        limits(tokens=1000),
        (
            warn("Token budget at 90 %: 900 of 1,000 tokens", 900, 800, "message:3"),
            pause("Token budget exceeded: 1,200 of 1,000 tokens", 1200, 1000, "message:4"),
        ),
    ),
    Case(
        "one reply past both levels gives only the pause",
        TokenBudget(),
        (user("go"), spent(1500)),
        limits(tokens=1000),
        (pause("Token budget exceeded: 1,500 of 1,000 tokens", 1500, 1000, "message:2"),),
    ),
    Case(
        "a custom warn ratio moves the warning",
        TokenBudget(),
        (user("go"), spent(500)),
        limits(tokens=1000, warn_ratio=0.5),
        (warn("Token budget at 50 %: 500 of 1,000 tokens", 500, 500, "message:2"),),
    ),
    Case(
        "wall time runs from the start to the latest event",
        WallTimeBudget(),
        (user("go"), assistant("a"), assistant("b"), assistant("c"), assistant("d")),
        limits(wall_time_minutes=10),
        (
            warn("Wall-time budget at 90 %: 9 of 10 minutes", 9, 8, "message:4"),
            pause("Wall-time budget exceeded: 12 of 10 minutes", 12, 10, "message:5"),
        ),
        minutes_apart=3,
    ),
    Case(
        "sub-agents are Task and Agent calls, not task-list tools",
        SubtaskBudget(),
        (
            user("go"),
            assistant(
                "",
                call("TaskCreate", "ok", subject="x"),
                call("Task", "done", subagent_type="Explore", prompt="map it"),
                call("Agent", "done", subagent_type="general-purpose", prompt="fix it"),
                call("spawn_agent", "ok", message="review"),
            ),
        ),
        limits(subtasks=3, warn_ratio=0.6),
        (
            warn("Sub-task budget at 67 %: 2 of 3 sub-agents", 2, 1.8, "call:3"),
            pause("Sub-task budget used up: 3 of 3 sub-agents", 3, 3, "call:4"),
        ),
    ),
    Case(
        "artifacts are distinct files written by successful calls",
        ArtifactBudget(),
        (
            user("go"),
            assistant(
                "",
                call("Write", "ok", file_path="a.py", content="x"),
                call(
                    "Edit", "ok", file_path="/home/dev/project/a.py", old_string="x", new_string="y"
                ),
                call("Write", "denied", status="error", file_path="b.py", content="x"),
                bash("echo x > c.txt"),
                call("Read", "x", file_path="d.py"),
                bash("cp a.py e.py"),
            ),
        ),
        limits(artifacts=3, warn_ratio=0.5),
        (
            warn("Artifact budget at 67 %: 2 of 3 files", 2, 1.5, "call:4"),
            pause("Artifact budget used up: 3 of 3 files", 3, 3, "call:6"),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_budget_crossings(case: Case) -> None:
    t = trace(*case.steps, minutes_apart=case.minutes_apart)
    found = findings(t, case.rule, case.policy)
    assert [f.title for f in found] == [c.title for c in case.expect]
    calls = [e.call for e in t.events if e.kind == "call"]
    messages = [e.message for e in t.events if e.kind == "message"]
    for finding, expected in zip(found, case.expect, strict=True):
        assert (finding.severity, finding.action, finding.category) == (
            expected.severity,
            expected.action,
            "budget",
        )
        assert (finding.actual, finding.threshold) == (expected.actual, expected.threshold)
        kind, number = expected.cites.split(":")
        source = (calls if kind == "call" else messages)[int(number) - 1]
        assert source is not None
        assert [e.source_id for e in finding.evidence] == [source.source_id]
        assert finding.trigger_source_id == source.source_id
        assert SOURCE in finding.content


@pytest.mark.parametrize("rule", budgets.RULES, ids=lambda r: r.id)
def test_no_budget_no_finding(rule: Rule) -> None:
    t = trace(user("go"), spent(10**9), assistant("", *reads(500)), minutes_apart=10**4)
    assert findings(t, rule, DEFAULT_POLICY) == []


def test_crossings_keep_their_keys_when_more_events_arrive() -> None:
    steps = (user("go"), assistant("", *reads(5)))
    short = trace(*steps)
    supervisor = Supervisor(short.context, limits(tool_calls=5), [ToolCallBudget()])
    live = supervisor.observe_all(short.events)
    more = supervisor.observe_all([])
    assert more == []
    again = check_trace(short, limits(tool_calls=5), [ToolCallBudget()])
    assert sorted(f.key for f in live) == sorted(f.key for f in again)
    assert len({f.key for f in live}) == 2


@dataclass(frozen=True)
class GateCase:
    name: str
    rule: Rule
    before: tuple[MessageSpec, ...]
    proposed: CallSpec
    policy: Policy
    decision: str
    title: str = ""


GATES = [
    GateCase(
        "a call past the tool-call budget is denied",
        ToolCallBudget(),
        (assistant("", *reads(3)),),
        call("Read", file_path="x"),
        limits(tool_calls=3),
        "deny",
        "Tool call budget would be exceeded: 4 of 3 calls",
    ),
    GateCase(
        "the last call within the budget is allowed",
        ToolCallBudget(),
        (assistant("", *reads(2)),),
        call("Read", file_path="x"),
        limits(tool_calls=3),
        "allow",
    ),
    GateCase(
        "a sub-agent past the budget is denied",
        SubtaskBudget(),
        (assistant("", call("Task", "done", prompt="a")),),
        call("Agent", prompt="b"),
        limits(subtasks=1),
        "deny",
        "Sub-task budget would be exceeded: 2 of 1 sub-agents",
    ),
    GateCase(
        "other calls do not use the sub-task budget",
        SubtaskBudget(),
        (assistant("", call("Task", "done", prompt="a")),),
        call("Read", file_path="x"),
        limits(subtasks=1),
        "allow",
    ),
    GateCase(
        "a new file past the artifact budget is denied",
        ArtifactBudget(),
        (assistant("", call("Write", "ok", file_path="a.py")),),
        call("Write", file_path="b.py"),
        limits(artifacts=1),
        "deny",
        "Artifact budget would be exceeded: 2 of 1 files",
    ),
    GateCase(
        "rewriting a counted file is allowed",
        ArtifactBudget(),
        (assistant("", call("Write", "ok", file_path="a.py")),),
        call("Edit", file_path="a.py"),
        limits(artifacts=1),
        "allow",
    ),
    GateCase(
        "every call is denied once the tokens are spent",
        TokenBudget(),
        (spent(1000),),
        call("Read", file_path="x"),
        limits(tokens=1000),
        "deny",
        "Token budget spent: 1,000 of 1,000 tokens",
    ),
    GateCase(
        "calls are allowed while tokens remain",
        TokenBudget(),
        (spent(999),),
        call("Read", file_path="x"),
        limits(tokens=1000),
        "allow",
    ),
    GateCase(
        "every call is denied once the wall time is spent",
        WallTimeBudget(),
        (assistant("a"), assistant("b"), assistant("c")),
        call("Read", file_path="x"),
        limits(wall_time_minutes=2),
        "deny",
        "Wall-time budget spent: 3 of 2 minutes",
    ),
    GateCase(
        "the policy can make the gate ask instead",
        ToolCallBudget(),
        (assistant("", *reads(1)),),
        call("Read", file_path="x"),
        Policy.model_validate({"budgets": {"tool_calls": 1}, "rules": {"tool_call_budget": "ask"}}),
        "ask",
    ),
]


@pytest.mark.parametrize("case", GATES, ids=lambda c: c.name)
def test_gate(case: GateCase) -> None:
    decision = gate(trace(user("go"), *case.before), case.proposed, case.rule, case.policy)
    assert decision.decision == case.decision
    if case.title:
        assert decision.reason.startswith(f"{case.title} [{case.rule.id}]")
        (finding,) = decision.findings
        assert finding.evidence[0].source_id.endswith(":proposed")


def test_the_gate_leaves_the_count_alone() -> None:
    t = trace(user("go"), assistant("", *reads(2)))
    supervisor = Supervisor(t.context, limits(tool_calls=3), [ToolCallBudget()])
    supervisor.observe_all(t.events)
    proposed = t.events[-1].call
    assert proposed is not None
    for _ in range(3):
        assert supervisor.before_call(proposed).decision == "allow"


def test_the_examples_cross_their_budgets_at_the_right_calls() -> None:
    policy = limits(tool_calls=12, subtasks=1, artifacts=2)
    found: dict[str, list[tuple[str, str]]] = {}
    for item in read_paths([EXAMPLES_DIR]):
        assert isinstance(item, ConversationBundle)
        t = Trace.from_bundle(prepare_bundle(item).bundle)
        for f in check_trace(t, policy, budgets.RULES):
            found.setdefault(t.context.conversation_id, []).append(
                (f.title, f.evidence[0].source_id)
            )
    claude = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"
    assert sorted(found[claude]) == [
        ("Artifact budget used up: 2 of 2 files", "cc:tool:toolu_019zRUZNnJYwDqpbmWFp8uCt"),
        ("Sub-task budget used up: 1 of 1 sub-agents", "cc:tool:toolu_01vL4XwGBjzGRY7dLErfxQ5G"),
        ("Tool call budget at 83 %: 10 of 12 calls", "cc:tool:toolu_01guP7v4N3kJEzi6tWvpKJuN"),
        ("Tool call budget used up: 12 of 12 calls", "cc:tool:toolu_01YTuWNSeV2fbV6BjdtXKZN9"),
    ]
    codex = "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
    assert found[codex] == [
        (
            "Artifact budget exceeded: 3 of 2 files",
            "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae:call:call_PKdeyJ271r9TDq9E8DBTxZPU",
        )
    ]
