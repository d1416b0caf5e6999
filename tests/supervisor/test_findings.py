"""Decisions become findings (SPEC SUP-6…SUP-8): re-validated evidence, stable keys."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from proctor.store import SqlStore
from proctor.supervisor import (
    Decision,
    SupervisorAnswer,
    Window,
    build_window,
    findings_from,
    supervise,
)
from proctor.testing.scripted_model import ScriptedModelServer
from tests.supervisor.builders import Chat, in_memory, stored
from tests.supervisor.scripted import answer, caller_for, decision


def claim_chat() -> Chat:
    chat = Chat()
    chat.user("Fix the rounding bug and make sure the tests pass.")
    chat.assistant("Running the tests.")
    chat.tool("Bash", {"command": "pytest -q"}, "1 failed, 3 passed", status="error", exit_code=1)
    chat.assistant("All tests pass, the fix is done.")
    return chat


def window_id(window: Window, source_id: str) -> str:
    return next(i.window_id for i in window.items if i.source_id == source_id)


def decide(evidence: list[str], **changes: object) -> Decision:
    return Decision.model_validate(decision(evidence, **changes))


CLAIM = "sup:conv-1:m2"
RUN = "sup:conv-1:c0"


def test_ids_not_in_the_window_are_dropped_and_the_rest_kept() -> None:
    window = build_window(in_memory(claim_chat()))
    cited = [window_id(window, CLAIM), "m999", CLAIM, "t7", window_id(window, RUN)]
    [finding] = findings_from([decide(cited)], window, "evidence", 1)
    assert [e.source_id for e in finding.evidence] == [CLAIM, RUN]
    assert finding.severity == "high" and not finding.speculative


def test_a_decision_left_without_valid_evidence_is_speculative_and_capped_at_low() -> None:
    window = build_window(in_memory(claim_chat()))
    high, info = findings_from(
        [
            decide(["m999", "sup:conv-1:m2"]),
            decide([], severity="info", title="A minor remark"),
        ],
        window,
        "general",
        1,
    )
    assert (high.severity, high.speculative, high.evidence) == ("low", True, [])
    assert (info.severity, info.speculative) == ("info", True)


def test_ids_of_an_earlier_window_are_not_valid_in_a_later_one() -> None:
    chat = Chat()
    for i in range(20):
        chat.user(f"step {i}")
    old = build_window(in_memory(chat))
    first_id = old.items[0].window_id
    for i in range(12):
        chat.user(f"later {i}")
    [finding] = findings_from([decide([first_id])], build_window(in_memory(chat)), "general", 1)
    assert finding.speculative and finding.severity == "low"


def test_the_whole_target_is_evidence_only_for_something_that_never_happened() -> None:
    window = build_window(in_memory(claim_chat()))
    missing, risky = findings_from(
        [
            decide(["target"], category="missing_requirement", title="No test run after the fix"),
            decide(["target"], category="risk", title="Risky somehow"),
        ],
        window,
        "goal",
        1,
    )
    [absence] = missing.evidence
    assert (absence.source_type, absence.source_id) == ("conversation", "sup:conv-1")
    assert absence.missing == "No test run after the fix" and not missing.speculative
    assert risky.speculative and risky.evidence == [] and risky.severity == "low"


def test_continue_decisions_produce_no_finding() -> None:
    window = build_window(in_memory(claim_chat()))
    cited = [window_id(window, CLAIM)]
    assert findings_from([decide(cited, action="continue")], window, "general", 1) == ()


@pytest.mark.parametrize("action", ["pause", "stop"])
def test_a_model_can_never_pause_or_stop(action: str) -> None:
    with pytest.raises(ValidationError):
        SupervisorAnswer.model_validate(answer(decision(["m1"], action=action)))


def test_the_same_problem_cited_twice_in_one_answer_is_one_finding() -> None:
    window = build_window(in_memory(claim_chat()))
    cited = [window_id(window, CLAIM), window_id(window, RUN)]
    findings = findings_from(
        [decide(cited, severity="low"), decide(list(reversed(cited)), severity="high")],
        window,
        "general",
        1,
    )
    assert [f.severity for f in findings] == ["high"]


def test_task_findings_are_keyed_within_their_task() -> None:
    chat = claim_chat()
    chat.start_task("task-a", "A")
    chat.start_task("task-b", "B")
    transcript = in_memory(chat)
    keys = {
        findings_from([decide([])], build_window(transcript, task_id=t), "general", 1)[0].key
        for t in ("task-a", "task-b")
    }
    assert len(keys) == 2


@pytest.mark.anyio
async def test_rerunning_over_the_same_events_updates_instead_of_duplicating(
    store: SqlStore,
) -> None:
    chat = claim_chat()
    first_window = build_window(stored(store, chat))
    first_answer = answer(
        decision(
            [window_id(first_window, CLAIM), window_id(first_window, RUN)],
            title="Claims all 4 tests pass after a failing test run",
        )
    )
    for i in range(3):
        chat.user(f"and another thing {i}")
    later_window = build_window(stored(store, chat))
    # Later the model cites the same sources (in the other order), with other numbers.
    later_answer = answer(
        decision(
            [window_id(later_window, RUN), window_id(later_window, CLAIM)],
            title="Claims all 4 tests pass after a failing test run",
            severity="medium",
        )
    )
    with ScriptedModelServer([first_answer, later_answer]) as server:
        first = await supervise(caller_for(server), first_window, "evidence")
        later = await supervise(caller_for(server), later_window, "evidence")
    assert [f.key for f in first.findings] == [f.key for f in later.findings]
    recorded = store.record_findings(first.findings)
    again = store.record_findings(later.findings)
    assert len(recorded.new) == 1 and again.new == () and len(again.updated) == 1
    findings, total = store.findings(conversation_ids=["sup:conv-1"])
    assert total == 1 and findings[0].severity == "medium" and findings[0].origin == "model"
