"""monologue v2: a message is talk only once it is known to have issued no call (issue 19).

Single-agent traces here; multi-agent logs (hand-offs as delegated calls, ledgers, a
delegate's reply) are in tests/sources/test_benchmarks_group_chat.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from proctor.rules import DEFAULT_POLICY, Supervisor
from proctor.rules.builtin.loops import MonologueRule
from tests.rules.helpers import MessageSpec, assistant, call, findings, trace, user

STREAK = "Assistant keeps talking without acting"
REPEAT = "Assistant repeats the same message"
LEDGER = "Status:\n" + json.dumps({"done": False, "next": "check the invoices"})
ANSWER = "The invoice total for March is 1,240 euros, taken from the ledger export."


def narration(number: int) -> MessageSpec:
    return assistant(f"Thinking about part {number} of the plan before doing anything.")


@dataclass(frozen=True)
class Case:
    name: str
    specs: tuple[MessageSpec, ...]
    titles: tuple[str, ...]


CASES = [
    Case(
        "three narrations and then a message that acts are no monologue",
        (user("go"), *map(narration, range(3)), assistant("Now reading.", call("Read", "x"))),
        (),
    ),
    Case(
        "four narrations are a monologue even when a fifth message acts",
        (user("go"), *map(narration, range(4)), assistant("Now reading.", call("Read", "x"))),
        (STREAK,),
    ),
    Case(
        "a run that ends on the fourth narration is a monologue",
        (user("go"), *map(narration, range(4))),
        (STREAK,),
    ),
    Case(
        "a status record between narrations neither extends nor breaks the streak",
        (user("go"), narration(0), assistant(LEDGER), narration(1), narration(2), narration(3)),
        (STREAK,),
    ),
    Case(
        "status records alone are no monologue",
        (user("go"), *[assistant(LEDGER)] * 5),
        (),
    ),
    Case(
        "a message showing a call's result again is output, not the agent repeating itself",
        (
            user("total?"),
            *[assistant("", call("query_ledger", ANSWER, month=m)) for m in (1, 2, 3)],
            assistant(ANSWER),
            assistant("", call("query_ledger", ANSWER, month=4)),
            assistant(ANSWER),
            assistant("", call("query_ledger", ANSWER, month=5)),
            assistant(ANSWER),
        ),
        (),
    ),
    Case(
        "commentary repeated beside calls is still a repeated message",
        (
            user("fix it"),
            *[
                assistant(
                    "I will try the same fix once more and see if it works now.",
                    call("Edit", "ok", file_path=f"{n}.py"),
                )
                for n in range(3)
            ],
        ),
        (REPEAT,),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_monologue_counts_only_talk(case: Case) -> None:
    found = findings(trace(*case.specs), MonologueRule())
    assert tuple(f.title for f in found) == case.titles


def test_live_the_streak_is_reported_with_the_next_event_or_at_the_end() -> None:
    t = trace(user("go"), *map(narration, range(4)), user("stop"))
    supervisor = Supervisor(t.context, DEFAULT_POLICY, [MonologueRule()])
    *before, last = t.events
    assert [f for e in before for f in supervisor.observe(e)] == []  # the 4th is not judged yet
    (finding,) = supervisor.observe(last)
    assert finding.title == STREAK
    assert finding.evidence[-1].source_id == before[-1].source_id

    ended = trace(user("go"), *map(narration, range(4)))
    live = Supervisor(ended.context, DEFAULT_POLICY, [MonologueRule()])
    assert [f for e in ended.events for f in live.observe(e)] == []
    assert [f.title for f in live.finish()] == [STREAK]
