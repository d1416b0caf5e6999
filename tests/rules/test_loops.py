"""Loop rules (SPEC SUP-4 stuck patterns): repeated calls, repeated results and errors,
A-B alternation and monologue — one finding per loop, citing the repeated calls."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.findings import Finding
from proctor.rules import DEFAULT_POLICY, Policy, Supervisor, Trace, check_trace
from proctor.rules.builtin import loops
from proctor.sources import prepare_bundle, read_paths
from proctor.transcript import ConversationBundle, ToolCall, ToolStatus
from tests.rules.helpers import CallSpec, MessageSpec, assistant, bash, call, trace, user

LOCKED = (
    "Exit code 1\nTraceback (most recent call last):\n"
    '  File "cli.py", line 26, in <module>\n'
    "sqlite3.OperationalError: database is locked"
)


def export(result: str = LOCKED, exit_code: int = 1) -> CallSpec:
    return bash("python -m invoice.cli export --month 2026-01", result, exit_code=exit_code)


def codex_migrate(chunk: str, wall: str) -> CallSpec:
    output = (
        f"Chunk ID: {chunk}\nWall time: {wall} seconds\nProcess exited with code 1\n"
        "Output:\nError: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect"
    )
    return call("exec_command", output, status="error", exit_code=1, cmd="npm run db:migrate")


def read(path: str, content: str = "x = 1\n") -> CallSpec:
    return call("Read", content, file_path=path)


def tool(name: str, result: str, status: ToolStatus = "ok", **arguments: object) -> CallSpec:
    return call(name, result, status=status, **arguments)


def run_loops(t: Trace, policy: Policy = DEFAULT_POLICY) -> list[Finding]:
    return check_trace(t, policy, [type(rule)() for rule in loops.RULES])


def calls_of(t: Trace) -> list[str]:
    return [e.source_id for e in t.events if e.kind == "call"]


@dataclass(frozen=True)
class Case:
    name: str
    specs: tuple[MessageSpec, ...]
    rule: str | None = None
    """The one rule expected to fire (None: nothing fires)."""
    actual: int = 0
    threshold: int = 0
    severity: str = "medium"
    cited: tuple[int, ...] = ()
    """Positions (among the trace's calls) of the calls the finding cites."""


CASES = [
    Case(
        "three identical reads with the same result in a row are a repeated call",
        (user("fix it"), assistant("", read("a.py"), read("a.py"), read("a.py"))),
        "repeated_tool_call",
        3,
        3,
        cited=(0, 1, 2),
    ),
    Case(
        "assistant text between the repeats is not progress",
        (
            user("fix it"),
            assistant("Reading.", read("a.py")),
            assistant("Reading again.", read("a.py")),
            assistant("Once more.", read("a.py")),
        ),
        "repeated_tool_call",
        3,
        3,
        cited=(0, 1, 2),
    ),
    Case(
        "a description change or extra spaces do not make a different call",
        (
            user("test"),
            assistant(
                "",
                call("Bash", "ok", command="ls  -la", description="list"),
                call("Bash", "ok", command="ls -la", description="list files"),
                call("Bash", "ok", command="ls -la "),
            ),
        ),
        "repeated_tool_call",
        3,
        3,
        cited=(0, 1, 2),
    ),
    Case(
        "a repeated call with side effects is high severity",
        (user("save"), assistant("", *[call("Write", "ok", file_path="a.py", content="x")] * 3)),
        "repeated_tool_call",
        3,
        3,
        "high",
        (0, 1, 2),
    ),
    Case(
        "the same failing command four times is one error loop, not a repeated-call loop too",
        (user("export"), assistant("Trying.", export()), *[assistant("", export())] * 3),
        "repeated_action_error",
        4,
        3,
        "high",
        (0, 1, 2),
    ),
    Case(
        "changing chunk ids and wall times do not make a retry different",
        (
            user("migrate"),
            assistant("", codex_migrate("b2ed73", "0.6834")),
            assistant("Retrying.", codex_migrate("0568f2", "0.6512")),
            assistant("", codex_migrate("af1638", "0.6690")),
        ),
        "repeated_action_error",
        3,
        3,
        "high",
        (0, 1, 2),
    ),
    Case(
        "the same failure spread out between other calls is an error loop",
        (
            user("export"),
            assistant("", export(), read("a.py"), export(), read("b.py"), export()),
        ),
        "repeated_action_error",
        3,
        3,
        "high",
        (0, 2, 4),
    ),
    Case(
        "the same result four times in the window, not in a row, is a repeated result",
        (
            user("check"),
            assistant(
                "",
                tool("get_channels", "general, random"),
                read("a.py"),
                tool("get_channels", "general, random"),
                read("b.py"),
                tool("get_channels", "general, random"),
                read("c.py"),
                tool("get_channels", "general, random"),
            ),
        ),
        "repeated_action_result",
        4,
        4,
        cited=(0, 2, 4, 6),
    ),
    Case(
        "two calls alternating with identical results over six steps are an alternating loop",
        (user("go"), assistant("", *[read("a.py"), tool("list_files", "a.py b.py")] * 3)),
        "alternating_loop",
        6,
        6,
        cited=(0, 1, 2, 3, 4, 5),
    ),
    # near misses
    Case(
        "two identical calls are not a loop",
        (user("go"), assistant("", read("a.py"), read("a.py"))),
    ),
    Case(
        "polling whose result changes is progress",
        (
            user("wait for the job"),
            assistant(
                "",
                bash("gh run view 42", "status: queued (1 of 5 steps)"),
                bash("gh run view 42", "status: running (3 of 5 steps)"),
                bash("gh run view 42", "status: running (4 of 5 steps)"),
                bash("gh run view 42", "status: completed (5 of 5 steps)"),
            ),
        ),
    ),
    Case(
        "a user message between repeats starts over",
        (
            user("export"),
            assistant("", export(), export()),
            user("try again"),
            assistant("", export(), export()),
        ),
    ),
    Case(
        "a different call in between breaks a run",
        (user("go"), assistant("", read("a.py"), read("b.py"), read("a.py"))),
    ),
    Case(
        "failing with a different error each time is not an error loop",
        (
            user("export"),
            assistant(
                "",
                export("Exit code 1\nOperationalError: database is locked"),
                export("Exit code 1\nOperationalError: no such table: invoices"),
                export("Exit code 1\nPermissionError: data/out.csv"),
            ),
        ),
    ),
    Case(
        "failures further apart than the window are not one loop",
        (
            user("export"),
            assistant("", export(), *[read(f"f{i}.py") for i in range(20)], export()),
            assistant("", *[read(f"g{i}.py") for i in range(20)], export()),
        ),
    ),
    Case(
        "three occurrences of the same result are not yet a repeated result",
        (
            user("check"),
            assistant(
                "",
                tool("get_channels", "general"),
                read("a.py"),
                tool("get_channels", "general"),
                read("b.py"),
                tool("get_channels", "general"),
            ),
        ),
    ),
    Case(
        "an alternation whose results change is progress",
        (
            user("go"),
            assistant(
                "",
                *[
                    spec
                    for i in range(3)
                    for spec in (
                        call("Edit", "ok", file_path="a.py", old_string="x", new_string="y"),
                        bash("pytest -q", f"{3 - i} failed, {20 + i} passed", exit_code=1),
                    )
                ],
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_loop_rules(case: Case) -> None:
    t = trace(*case.specs)
    found = run_loops(t)
    if case.rule is None:
        assert found == []
        return
    (finding,) = found
    assert (finding.rule, finding.category, finding.severity) == (
        case.rule,
        "repetition",
        case.severity,
    )
    assert (finding.actual, finding.threshold) == (case.actual, case.threshold)
    calls = calls_of(t)
    cited_calls = [e.source_id for e in finding.evidence if e.field != "result_text"]
    assert cited_calls == [calls[i] for i in case.cited]
    assert finding.trigger_source_id in calls
    assert finding.rule_version == 1


def test_the_error_loop_cites_the_calls_and_the_error_line() -> None:
    t = trace(user("export"), assistant("", *[export()] * 4))
    (finding,) = run_loops(t)
    *commands, error = finding.evidence
    assert all(e.field == "arguments.command" for e in commands)
    assert commands[0].excerpt == "python -m invoice.cli export --month 2026-01"
    assert error.field == "result_text" and error.start is not None and error.end is not None
    assert LOCKED[error.start : error.end] == "sqlite3.OperationalError: database is locked"
    assert "database is locked" in finding.content
    assert finding.trigger_source_id == calls_of(t)[3]  # the latest repeat


def test_a_longer_loop_updates_one_finding_instead_of_opening_new_ones() -> None:
    three = run_loops(trace(user("export"), assistant("", *[export()] * 3)))
    five = run_loops(trace(user("export"), assistant("", *[export()] * 5)))
    assert [f.actual for f in three] == [3]
    assert [f.actual for f in five] == [5]
    assert len(five[0].evidence) == len(three[0].evidence)


def test_keys_are_stable_when_the_same_trace_is_checked_again() -> None:
    t = trace(user("export"), assistant("", *[export()] * 4))
    assert [f.key for f in run_loops(t)] == [f.key for f in run_loops(t)]


def test_a_failing_run_goes_to_repeated_tool_call_when_the_error_rule_is_off() -> None:
    t = trace(user("export"), assistant("", *[export()] * 3))
    policy = Policy(rules={"repeated_action_error": "off"})
    (finding,) = run_loops(t, policy)
    assert (finding.rule, finding.severity, finding.actual) == ("repeated_tool_call", "high", 3)


@dataclass(frozen=True)
class MonologueCase:
    name: str
    specs: tuple[MessageSpec, ...]
    title: str | None
    actual: int = 0
    threshold: int = 0


STREAK = "Assistant keeps talking without acting"
REPEAT = "Assistant repeats the same message"
LONG = "I will now check the transactions from February to find the bill payment."

MONOLOGUE_CASES = [
    MonologueCase(
        "four assistant messages with no call and no user message are a monologue",
        (user("hi"), *[assistant(f"Thinking about step {i} of the plan.") for i in range(4)]),
        STREAK,
        4,
        4,
    ),
    MonologueCase(
        "the same long text three times in one turn is a repeated message",
        (
            user("pay the bill"),
            assistant(LONG, tool("get_transactions", "[]")),
            assistant(LONG, tool("get_transactions", "[]", n=2)),
            assistant(LONG, tool("get_transactions", "[]", n=3)),
        ),
        REPEAT,
        3,
        3,
    ),
    MonologueCase(
        "three assistant messages are not a monologue",
        (user("hi"), *[assistant(f"Step {i}.") for i in range(3)]),
        None,
    ),
    MonologueCase(
        "a tool call between the messages is action",
        (
            user("hi"),
            assistant("One."),
            assistant("Two.", read("a.py")),
            assistant("Three."),
            assistant("Four."),
        ),
        None,
    ),
    MonologueCase(
        "short routine text may repeat",
        (user("go"), *[assistant("Done.", read(f"{i}.py")) for i in range(4)]),
        None,
    ),
    MonologueCase(
        "the same text in different turns is not a loop",
        (
            user("a"),
            assistant(LONG, read("a.py")),
            user("b"),
            assistant(LONG, read("b.py")),
            user("c"),
            assistant(LONG, read("c.py")),
        ),
        None,
    ),
]


@pytest.mark.parametrize("case", MONOLOGUE_CASES, ids=lambda c: c.name)
def test_monologue(case: MonologueCase) -> None:
    t = trace(*case.specs)
    found = run_loops(t)
    if case.title is None:
        assert found == []
        return
    (finding,) = found
    assert (finding.rule, finding.title) == ("monologue", case.title)
    assert (finding.actual, finding.threshold) == (case.actual, case.threshold)
    messages = [
        e.source_id for e in t.events if e.message is not None and e.message.role == "assistant"
    ]
    assert [e.source_id for e in finding.evidence] == messages[: case.actual]


@pytest.mark.parametrize(
    ("name", "history", "proposed", "rule", "decision"),
    [
        (
            "the gate asks before the third identical failing call",
            (export(), export()),
            export(),
            "repeated_action_error",
            "ask",
        ),
        (
            "the gate only warns before a third identical successful call",
            (read("a.py"), read("a.py")),
            read("a.py"),
            "repeated_tool_call",
            "allow",
        ),
        (
            "the gate warns before a sixth alternating step",
            (read("a.py"), tool("ls", "a.py"), read("a.py"), tool("ls", "a.py"), read("a.py")),
            tool("ls", "anything"),
            "alternating_loop",
            "allow",
        ),
        (
            "the gate has nothing to say about a new call",
            (export(), export()),
            read("a.py"),
            None,
            "allow",
        ),
    ],
)
def test_gate(
    name: str, history: tuple[CallSpec, ...], proposed: CallSpec, rule: str | None, decision: str
) -> None:
    t = trace(user("go"), assistant("", *history))
    supervisor = Supervisor(t.context, DEFAULT_POLICY, [type(r)() for r in loops.RULES])
    supervisor.observe_all(t.events)
    proposed_id = f"{t.context.conversation_id}:proposed"
    answer = supervisor.before_call(ToolCall(proposed_id, proposed.name, proposed.arguments))
    assert [f.rule for f in answer.findings] == ([rule] if rule else [])
    assert answer.decision == decision
    assert answer.rule == (rule if decision != "allow" else None)
    for finding in answer.findings:
        assert finding.trigger_source_id == proposed_id
        assert finding.evidence[0].source_id == proposed_id
        assert finding.actual == finding.threshold


def test_the_gate_does_not_change_what_is_found_later() -> None:
    t = trace(user("export"), assistant("", *[export()] * 3))
    rules = [type(r)() for r in loops.RULES]
    supervisor = Supervisor(t.context, DEFAULT_POLICY, rules)
    found = []
    for event in t.events:
        if event.kind == "call" and event.call is not None:
            proposed = ToolCall(event.call.source_id + ":p", event.call.name, event.call.arguments)
            supervisor.before_call(proposed)
            supervisor.before_call(proposed)
        found += supervisor.observe(event)
    assert [(f.rule, f.actual) for f in found] == [("repeated_action_error", 3)]


@pytest.mark.shared
def test_no_loops_in_the_real_transcripts(transcripts_dir: Path) -> None:
    # Real sessions poll (codex write_stdin), re-read files and retry with progress.
    found = [f for t in real_traces(transcripts_dir) for f in run_loops(t)]
    assert found == []


def real_traces(folder: Path) -> list[Trace]:
    bundles = [b for b in read_paths([folder]) if isinstance(b, ConversationBundle)]
    return [Trace.from_bundle(prepare_bundle(b).bundle) for b in bundles]


def test_braces_in_a_command_do_not_break_the_finding_text() -> None:
    spec = bash('echo "${HOME}" {} {count}', "Exit code 1\nerror: nope", exit_code=1)
    (finding,) = run_loops(trace(user("x"), assistant("", spec, spec, spec)))
    assert 'echo "${HOME}" {} {count}' in finding.content and "3 times" in finding.content


def test_the_same_loop_after_a_user_prompt_is_a_new_finding() -> None:
    t = trace(
        user("export"),
        assistant("", *[export()] * 3),
        user("I closed the other program, try again"),
        assistant("", *[export()] * 3),
    )
    found = run_loops(t)
    assert [(f.rule, f.actual) for f in found] == [("repeated_action_error", 3)] * 2
    assert len({f.key for f in found}) == 2


@pytest.mark.parametrize(
    "switched_off",
    [
        ("repeated_tool_call",),
        ("repeated_tool_call", "repeated_action_result", "alternating_loop"),
    ],
)
def test_a_user_prompt_ends_the_loop_whichever_loop_rules_are_switched_off(
    switched_off: tuple[str, ...],
) -> None:
    # One loop rule passes every event to the shared tracker, the others see only results:
    # the prompt must reach the tracker whichever rule is left to pass it on.
    t = trace(
        user("export"),
        assistant("", *[export()] * 3),
        user("I closed the other program, try again"),
        assistant("", *[export()] * 3),
    )
    found = run_loops(t, Policy(rules=dict.fromkeys(switched_off, "off")))
    assert [(f.rule, f.actual) for f in found] == [("repeated_action_error", 3)] * 2
    assert len({f.key for f in found}) == 2
