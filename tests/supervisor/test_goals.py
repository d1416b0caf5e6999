"""Goal versions (SPEC GOAL-1): set by the user, never by the agent's plan; idempotent."""

from __future__ import annotations

import re
from pathlib import Path

from proctor.store import SqlStore
from proctor.supervisor._goals import GOAL_CHARS, bounded_goal, goal_hash
from tests.supervisor.builders import Chat
from tests.supervisor.goal_helpers import harness, row_counts, save, track, track_stored

GOAL = "Fix the rounding of invoice totals in invoice_total.py: round half up."


def _started(store: SqlStore) -> Chat:
    chat = Chat()
    chat.user(GOAL)
    chat.assistant("I'll look at invoice_total.py first.")
    chat.tool("Read", {"file_path": "src/invoice_total.py"}, "def total(): ...")
    return chat


def test_version_one_comes_from_the_first_message_the_user_typed(store: SqlStore) -> None:
    chat = Chat()
    harness(chat, "injected", "<system-reminder>You are in plan mode.</system-reminder>")
    harness(chat, "summary", "Earlier: the user asked for a CSV export.", derived=True)
    harness(chat, "notice", "[Request interrupted by user]")
    harness(chat, "prompt", "   ")
    first = chat.user(GOAL)
    chat.assistant("On it.")
    chat.user("Sounds good, go ahead")

    update = track(store, chat)

    assert update.current is not None
    assert (update.current.version, update.current.reason) == (1, "initial")
    assert update.current.goal == GOAL
    assert update.current.source_id == first
    assert re.fullmatch(r"[0-9a-f]{32}", update.current.goal_hash)
    assert update.current.goal_hash == goal_hash(GOAL)
    assert [v.version for v in store.goal_versions(chat.conversation_id)] == [1]


def test_an_agent_rewriting_its_plan_creates_no_goal_version(store: SqlStore) -> None:
    chat = _started(store)
    chat.assistant("Plan:\n1. Read invoice_total.py\n2. Change the rounding\n3. Run the tests")
    chat.tool(
        "TodoWrite", {"todos": [{"content": "Change the rounding", "status": "pending"}]}, "ok"
    )
    track(store, chat)

    chat.assistant("New plan: rewrite the whole module in Rust and publish a crate instead.")
    chat.tool(
        "TodoWrite",
        {"todos": [{"content": "Rewrite in Rust", "status": "in_progress"}]},
        "Todos updated",
    )
    chat.assistant("Actually, instead of that, new task: I will migrate the database first.")
    update = track(store, chat)

    versions = store.goal_versions(chat.conversation_id)
    assert [(v.version, v.goal) for v in versions] == [(1, GOAL)]
    assert update.recorded == ()
    assert update.labelled == ()


def test_a_correction_creates_version_two_with_a_new_hash(store: SqlStore) -> None:
    chat = _started(store)
    track(store, chat)
    correction = chat.user("actually, use PostgreSQL instead")

    update = track(store, chat)

    first, second = store.goal_versions(chat.conversation_id)
    assert second.version == 2
    assert second.reason == "correct"
    assert second.source_id == correction
    assert second.goal == f"{GOAL}\nCorrected: actually, use PostgreSQL instead"
    assert second.goal_hash != first.goal_hash
    assert update.current == second


def test_refine_and_expand_add_to_the_goal(store: SqlStore) -> None:
    chat = _started(store)
    chat.user("Make sure amounts below one cent are kept")
    chat.assistant("Noted.")
    chat.user("Also add a currency column to the report")

    track(store, chat)

    reasons = [
        (v.reason, v.goal.splitlines()[-1]) for v in store.goal_versions(chat.conversation_id)
    ]
    assert reasons == [
        ("initial", GOAL),
        ("refine", "Refined: Make sure amounts below one cent are kept"),
        ("expand", "Also: Also add a currency column to the report"),
    ]


def test_a_new_goal_replaces_the_goal(store: SqlStore) -> None:
    chat = _started(store)
    chat.user("New task: write the release notes for 2.0")

    track(store, chat)

    current = store.current_goal(chat.conversation_id)
    assert current is not None
    assert (current.version, current.reason) == (2, "new_goal")
    assert current.goal == "New task: write the release notes for 2.0"


def test_cancel_closes_the_goal_and_the_next_request_opens_a_new_one(store: SqlStore) -> None:
    chat = _started(store)
    chat.user("never mind")
    track(store, chat)
    closed = store.current_goal(chat.conversation_id)
    assert closed is not None
    assert (closed.version, closed.reason, closed.closed) == (2, "cancel", True)
    assert closed.goal == GOAL

    request = chat.user("Please add a CSV export to the monthly report page")
    track(store, chat)

    current = store.current_goal(chat.conversation_id)
    assert current is not None
    assert (current.version, current.reason, current.source_id) == (3, "new_goal", request)
    assert not current.closed


def test_a_low_confidence_label_is_recorded_and_keeps_the_goal(store: SqlStore) -> None:
    chat = _started(store)
    turn = chat.user("hmm, the numbers on the second page look odd")

    update = track(store, chat)

    label = next(label for label in update.labelled if label.source_id == turn)
    assert (label.intent, label.low_confidence, label.model) == ("continue", True, None)
    assert label.confidence < 0.6
    assert label.goal_version == 1
    assert len(store.goal_versions(chat.conversation_id)) == 1


def test_tracking_the_same_messages_again_writes_nothing(store: SqlStore, tmp_path: Path) -> None:
    chat = _started(store)
    chat.start_task("cc:task:s:1", "Round half up", goal="Change ROUND_DOWN to ROUND_HALF_UP")
    chat.user("actually, use PostgreSQL instead")
    chat.user("hmm, odd numbers")
    first = track(store, chat)
    counts = row_counts(tmp_path / "p.db")

    again = track(store, chat)

    assert len(first.recorded) == 3  # two conversation versions and the task's goal
    assert len(first.labelled) == 3
    assert (again.recorded, again.labelled, again.unlabelled) == ((), (), 0)
    assert row_counts(tmp_path / "p.db") == counts == (3, 3)
    assert again.current == first.current


def test_a_task_goal_is_its_subject_and_description(store: SqlStore) -> None:
    chat = _started(store)
    chat.start_task("cc:task:s:1", "Round half up", goal="Change ROUND_DOWN to ROUND_HALF_UP")
    created = chat.event("created", "Round half up", task_id="cc:task:s:1")

    track(store, chat)

    (version,) = store.goal_versions("cc:task:s:1")
    assert version.goal == "Round half up\nChange ROUND_DOWN to ROUND_HALF_UP"
    assert (version.version, version.reason, version.source_id) == (1, "task", created)


def test_a_sub_agent_conversation_has_no_user_goal(store: SqlStore) -> None:
    parent = _started(store)
    save(store, parent)
    child = Chat(conversation_id="sup:child-1")
    child.user("Search the repository for every call to round()")
    child.assistant("Found three.")
    save(store, child, kind="subagent", parent=parent.conversation_id)

    update = track_stored(store, child.conversation_id)

    assert (update.current, update.recorded, update.labelled) == (None, (), ())
    assert store.intent_labels(child.conversation_id) == []


def test_goal_hash_ignores_case_and_spacing() -> None:
    assert goal_hash("Fix  the\nRounding ") == goal_hash("fix the rounding")
    assert goal_hash("fix the rounding") != goal_hash("fix the rounding!")


def test_long_goals_keep_their_start_and_their_latest_change(store: SqlStore) -> None:
    chat = Chat()
    chat.user("Build the billing export. " + "Context line. " * 200)
    for number in range(6):
        chat.assistant("ok")
        chat.user(f"Also handle case {number}: " + "detail " * 150)

    track(store, chat)

    current = store.current_goal(chat.conversation_id)
    assert current is not None
    assert current.version == 7
    assert len(current.goal) <= GOAL_CHARS
    assert current.goal.startswith("Build the billing export.")
    assert current.goal.endswith(
        bounded_goal("Also handle case 5: " + "detail " * 150, 1000)[-200:]
    )
