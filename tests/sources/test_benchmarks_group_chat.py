"""Multi-agent logs: every agent a participant, every hand-off a delegated call (issue 19, point 5).

The logs here are invented, not copied from a benchmark: other agent names, other ways
of handing over, AutoGen group-chat records with a code runner, an orchestrator that
delegates and one that only talks. What is checked is the structure the adapters read
(who hands work to whom, who answers), and what the loop and monologue rules make of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.findings import Finding
from proctor.rules import DEFAULT_POLICY, Trace, check_trace
from proctor.rules.builtin import loops
from proctor.rules.builtin._monologue import is_status_record
from proctor.sources import prepare_bundle
from proctor.transcript import ConversationBundle
from tests.sources.helpers import read

LEDGER = json.dumps(
    {"is_progress_being_made": {"answer": True}, "next_speaker": {"answer": "Researcher"}},
    indent=2,
)


def magentic_log(tmp_path: Path, entries: list[tuple[str, str]]) -> ConversationBundle:
    """A Magentic-One style log (AgentRx's shape) read by detection."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps([{"role": role, "content": text} for role, text in entries]))
    result = read(path)
    assert result.issues == []
    (bundle,) = result.bundles
    return bundle


def who_and_when_run(tmp_path: Path, record: dict[str, Any]) -> ConversationBundle:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"question": "Q?", "question_ID": "q-1", **record}))
    result = read(path)
    assert result.issues == []
    (bundle,) = result.bundles
    return bundle


def loop_findings(bundle: ConversationBundle) -> list[Finding]:
    trace = Trace.from_bundle(prepare_bundle(bundle).bundle)
    return check_trace(trace, DEFAULT_POLICY, [type(rule)() for rule in loops.RULES])


def monologues(bundle: ConversationBundle) -> list[Finding]:
    return [f for f in loop_findings(bundle) if f.rule == "monologue"]


def delegating_planner(rounds: int) -> list[tuple[str, str]]:
    """A planner that writes a ledger, hands each step to a researcher and reads the answer."""
    entries = [("human", "Find the population of Lyon in 1900.")]
    entries.append(("Planner (thought)", "Plan:\n- look it up\n- check a second source"))
    for number in range(rounds):
        entries += [
            ("Planner (thought)", f"Progress ledger:\n{LEDGER}"),
            ("Planner (-> Researcher)", f"Search the archives, step {number}."),
            ("Planner (thought)", "Now Researcher"),
            ("Researcher", f"I found source {number}: 459,099 inhabitants in the census."),
        ]
    return entries


def test_an_instruction_to_another_agent_is_a_delegated_call_answered_by_its_reply(
    tmp_path: Path,
) -> None:
    bundle = magentic_log(tmp_path, delegating_planner(2))
    first, second = bundle.tool_calls
    assert first.name == "delegate_to_agent"
    assert first.arguments == {"agent": "Researcher", "instruction": "Search the archives, step 0."}
    assert first.message_source_id == bundle.messages[3].source_id
    assert (first.status, first.result_text) == ("ok", bundle.messages[5].text)
    assert second.result_text == bundle.messages[9].text
    # The reply is still the researcher's own message.
    assert [m.author for m in bundle.messages[3:6]] == ["Planner", "Planner", "Researcher"]


def test_a_routing_note_is_a_notice_and_restates_a_waiting_hand_off(tmp_path: Path) -> None:
    bundle = magentic_log(tmp_path, delegating_planner(1))
    note = bundle.messages[4]
    assert (note.text, note.kind, note.author) == ("Now Researcher", "notice", "Planner")
    assert len(bundle.tool_calls) == 1  # the note restates the instruction's hand-off


@pytest.mark.parametrize(
    "note",
    ["Handing over to Coder.", "Selected speaker: coder", "Next: CODER\n/usr/lib/warn.py:3: W"],
)
def test_a_routing_note_alone_opens_a_hand_off_answered_by_the_named_agent(
    tmp_path: Path, note: str
) -> None:
    bundle = magentic_log(
        tmp_path,
        [
            ("human", "Sum the column."),
            ("Lead (thought)", note),
            ("Coder", "```python\nprint(sum([1, 2]))\n```"),
            ("Lead (-> Coder)", "Thanks, now double it."),
        ],
    )
    routed, instructed = bundle.tool_calls
    assert routed.message_source_id == bundle.messages[1].source_id
    assert routed.arguments == {"agent": "Coder"}
    assert routed.result_text == bundle.messages[2].text
    assert bundle.messages[1].kind == "notice"
    assert (instructed.status, instructed.result_text) == ("pending", None)


@pytest.mark.parametrize("role", ["Lead (to Coder)", "Lead (asks coder)", "Lead (→ Coder)"])
def test_a_role_note_naming_another_agent_addresses_an_instruction_to_it(
    tmp_path: Path, role: str
) -> None:
    bundle = magentic_log(
        tmp_path,
        [
            ("human", "Sum the column."),
            (role, "Write code that sums the first column."),
            ("Coder", "print(sum(rows))"),
            ("Lead (thought)", "That looks right; we are done here."),
        ],
    )
    (call,) = bundle.tool_calls
    assert call.arguments == {
        "agent": "Coder",
        "instruction": "Write code that sums the first column.",
    }
    assert call.result_text == "print(sum(rows))"


@pytest.mark.parametrize(
    "text",
    [
        "Thank you for the careful check, Researcher.",  # longer than a note
        "Researcher\nHere is what I think we should do next with the sources.",  # an address
        "Researcher and Coder should both look.",  # names two agents
    ],
)
def test_a_message_that_only_mentions_an_agent_is_no_hand_off(tmp_path: Path, text: str) -> None:
    bundle = magentic_log(
        tmp_path,
        [
            ("human", "Go."),
            ("Lead (-> Researcher)", "Look it up."),
            ("Researcher", "Found it."),
            ("Lead (-> Coder)", "Compute it."),
            ("Coder", "Done computing."),
            ("Lead (thought)", text),
        ],
    )
    assert bundle.messages[-1].kind == "reply"
    assert len(bundle.tool_calls) == 2


def test_an_orchestrator_that_delegates_is_not_a_monologue(tmp_path: Path) -> None:
    assert monologues(magentic_log(tmp_path, delegating_planner(6))) == []


def test_replanning_between_hand_offs_is_not_a_monologue(tmp_path: Path) -> None:
    entries = delegating_planner(1)
    entries += [
        ("Planner (thought)", f"Progress ledger:\n{LEDGER}"),
        ("Planner (thought)", "We are stuck. Making a new plan."),
        ("Planner (thought)", "New plan:\n- try the city archive\n- then the national one"),
        ("Planner (thought)", f"Progress ledger:\n{LEDGER}"),
        ("Planner (-> Researcher)", "Try the city archive instead."),
        ("Researcher", "The city archive says 459,099."),
    ]
    assert monologues(magentic_log(tmp_path, entries)) == []


def test_the_same_instruction_handed_over_again_is_not_a_repeated_message(
    tmp_path: Path,
) -> None:
    entries: list[tuple[str, str]] = [("human", "Open the report.")]
    for number in range(4):
        entries += [
            ("Lead (-> Browser)", "Please open the quarterly report and read the totals table."),
            ("Browser", f"Attempt {number}: the page did not load."),
        ]
    assert monologues(magentic_log(tmp_path, entries)) == []


def test_an_orchestrator_that_only_talks_is_still_a_monologue(tmp_path: Path) -> None:
    entries = delegating_planner(1)
    entries += [
        ("Planner (thought)", f"I wonder whether the census counted suburbs, round {n}.")
        for n in range(5)
    ]
    bundle = magentic_log(tmp_path, entries)
    (finding,) = monologues(bundle)
    assert finding.title == "Assistant keeps talking without acting"
    assert finding.actual == 5
    thoughts = [m.source_id for m in bundle.messages[-5:]]
    assert [e.source_id for e in finding.evidence] == thoughts[:4]  # cited when it began


def test_an_orchestrator_repeating_one_thought_is_still_caught(tmp_path: Path) -> None:
    entries = delegating_planner(1)
    thought = ("Planner (thought)", "I am not sure what to do next about the missing numbers.")
    entries += [thought, *delegating_planner(1)[2:], thought, *delegating_planner(1)[2:], thought]
    titles = [f.title for f in monologues(magentic_log(tmp_path, entries))]
    assert titles == ["Assistant repeats the same message"]


NOTHING_TO_RUN = "There is no code in the last message for me to run; let another agent speak."
GROUP_CHAT: dict[str, Any] = {
    "system_prompt": {"Analyst_Expert": "You analyse.", "Checker_Expert": "You check."},
    "history": [
        {"name": "Analyst_Expert", "role": "assistant", "content": "The task: count rows."},
        {"name": "Checker_Expert", "role": "user", "content": "```sh\nwc -l data.csv\n```"},
        {"name": "Runner", "role": "user", "content": "exit 0\n12 data.csv"},
        {"name": "Analyst_Expert", "role": "assistant", "content": "So 11 rows plus a header."},
        {"name": "Runner", "role": "user", "content": NOTHING_TO_RUN},
    ],
}


def test_a_group_chat_opens_with_the_task_as_the_prompt(tmp_path: Path) -> None:
    bundle = who_and_when_run(tmp_path, GROUP_CHAT)
    opening = next(m for m in bundle.messages if m.source_id.endswith(":0"))
    assert (opening.role, opening.kind, opening.author) == ("user", "prompt", "Analyst_Expert")


def test_a_speaker_without_a_system_prompt_runs_what_the_message_before_holds(
    tmp_path: Path,
) -> None:
    bundle = who_and_when_run(tmp_path, GROUP_CHAT)
    ran, nothing = bundle.tool_calls
    assert ran.message_source_id == "ww:algorithm-generated:q-1:1"
    assert ran.arguments == {"agent": "Runner", "instruction": "wc -l data.csv"}
    assert (ran.status, ran.result_text) == ("ok", "exit 0\n12 data.csv")
    assert nothing.arguments == {"agent": "Runner"}
    assert nothing.result_text == NOTHING_TO_RUN
    runner = [m for m in bundle.messages if m.author == "Runner"]
    assert [m.role for m in runner] == ["tool", "tool"]  # a program's output, still its own


def test_a_person_in_a_group_chat_prompts_and_is_no_program(tmp_path: Path) -> None:
    history = [
        *GROUP_CHAT["history"][:3],
        {"name": "User", "role": "user", "content": "Please also count the header."},
        {"name": "Analyst_Expert", "role": "assistant", "content": "Then it is 12 lines."},
    ]
    bundle = who_and_when_run(tmp_path, {**GROUP_CHAT, "history": history})
    person = next(m for m in bundle.messages if m.author == "User")
    assert (person.role, person.kind) == ("user", "prompt")
    assert [c.arguments["agent"] for c in bundle.tool_calls] == ["Runner"]


def test_a_group_chat_without_system_prompts_has_no_program_speakers(tmp_path: Path) -> None:
    record = {**GROUP_CHAT, "system_prompt": {}}
    assert who_and_when_run(tmp_path, record).tool_calls == ()


def test_a_code_runner_asked_again_and_again_with_nothing_to_run_is_a_loop(
    tmp_path: Path,
) -> None:
    history = [GROUP_CHAT["history"][0]]
    for number in range(3):
        history += [
            {"name": "Checker_Expert", "role": "user", "content": f"Let us think, {number}."},
            {"name": "Runner", "role": "user", "content": NOTHING_TO_RUN},
        ]
    bundle = who_and_when_run(tmp_path, {**GROUP_CHAT, "history": history})
    rules = {f.rule for f in loop_findings(bundle)}
    # The runner's canned answer is its output, not an agent repeating itself.
    assert rules == {"repeated_tool_call"}


@pytest.mark.parametrize(
    ("text", "record"),
    [
        (f"Progress ledger:\n{LEDGER}", True),
        (LEDGER, True),
        (f"{LEDGER}\n/usr/lib/python3/agents.py:216: UserWarning: model mismatch", True),
        ("Here is what I think:\n\nfirst, the plan\n" + LEDGER, False),  # prose before it
        ('I checked {"a": 1} and will now explain at length why it matters a lot.', False),
        ("[1, 2, 3]", False),
        ("Updated ledger: {not json}", False),
    ],
)
def test_a_status_record_is_mostly_one_json_object(text: str, record: bool) -> None:
    assert is_status_record(text) is record
