"""Trigger policy (SPEC SUP-2): each trigger fires on the events it names, and on nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.store import open_store
from proctor.supervision._sessions import Target
from proctor.supervision._triggers import (
    RUN_END_IDLE,
    Observation,
    fired_triggers,
    key_event_reasons,
    observe,
)
from proctor.transcript import SubagentRun, Task
from tests.supervision.helpers import Live, ManualClock, session_for

ALL = ("after_reply", "every_n_steps", "key_event", "run_end")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def live(clock: ManualClock) -> Live:
    return Live(clock)


def seen(live: Live, clock: ManualClock, last_event_index: int) -> Observation:
    return Observation(live.trace().events, last_event_index, clock.now())


def test_after_reply_fires_when_a_new_reply_ends_the_agents_turn(
    live: Live, clock: ManualClock
) -> None:
    live.user("fix the rounding").reply("Done: rounding is half-up now.")
    session = session_for("after_reply")
    assert fired_triggers(session, seen(live, clock, 0)) == ("after_reply",)


def test_after_reply_waits_while_the_turn_goes_on_with_tool_calls(
    live: Live, clock: ManualClock
) -> None:
    live.user("fix the rounding").reply("Running the tests.").call("pytest -q")
    assert fired_triggers(session_for("after_reply"), seen(live, clock, 0)) == ()
    live.reply("All green.")
    assert fired_triggers(session_for("after_reply"), seen(live, clock, 0)) == ("after_reply",)


def test_after_reply_counts_a_reply_followed_by_injected_text_and_a_new_prompt(
    live: Live, clock: ManualClock
) -> None:
    live.user("one").reply("answer one").user("<hook output>", kind="injected").user("two")
    assert fired_triggers(session_for("after_reply"), seen(live, clock, 0)) == ("after_reply",)


def test_nothing_fires_without_new_events(live: Live, clock: ManualClock) -> None:
    live.user("fix it").reply("Done.").call("rm -rf build", status="error", result="denied")
    last = live.trace().events[-1].index
    assert fired_triggers(session_for(*ALL, every_n_steps=1), seen(live, clock, last)) == ()


def test_every_n_steps_fires_at_n_new_events_and_not_before(live: Live, clock: ManualClock) -> None:
    live.user("go").reply("working").call("ls")  # events 0..3 (message, message, call, result)
    session = session_for("every_n_steps", every_n_steps=4)
    assert fired_triggers(session, seen(live, clock, 0)) == ()
    assert fired_triggers(session, seen(live, clock, -1)) == ("every_n_steps",)


def test_key_event_fires_on_a_failed_tool_call(live: Live, clock: ManualClock) -> None:
    live.user("test it").reply("Running.").call("pytest", status="error", result="1 failed")
    observation = seen(live, clock, 1)
    assert key_event_reasons(observation) == ("tool failure",)
    assert fired_triggers(session_for("key_event"), observation) == ("key_event",)


def test_key_event_ignores_successful_tool_calls(live: Live, clock: ManualClock) -> None:
    live.user("test it").reply("Running.").call("pytest", status="ok", result="4 passed")
    assert fired_triggers(session_for("key_event"), seen(live, clock, 1)) == ()


def test_key_event_fires_while_a_new_call_waits_for_approval(
    live: Live, clock: ManualClock
) -> None:
    live.user("deploy").reply("Deploying.").call("kubectl apply -f prod.yaml", status="pending")
    observation = seen(live, clock, 1)
    assert key_event_reasons(observation) == ("waiting for approval",)
    assert fired_triggers(session_for("key_event"), observation) == ("key_event",)


def test_key_event_fires_when_a_budget_rule_reaches_its_warning_ratio(
    tmp_path: Path, clock: ManualClock
) -> None:
    (tmp_path / ".proctor").mkdir()
    (tmp_path / ".proctor" / "policy.toml").write_text("[budgets]\ntool_calls = 5\n")
    live = Live(clock, cwd=str(tmp_path)).user("go").reply("step")
    store = open_store(tmp_path / "p.db")
    target = Target("conversation", live.conversation_id, live.conversation_id)
    for _ in range(3):
        live.call("ls")
    live.save(store)
    under = session_for("key_event", last_event_index=1)
    assert (
        fired_triggers(
            under, observe(store.transcript(target.target_id), target, under, now=clock.now())
        )
        == ()
    )
    live.call("ls")  # 4 of 5 calls: 80 %
    live.save(store)
    at_warning = session_for("key_event", last_event_index=live.trace().events[-3].index)
    observation = observe(store.transcript(target.target_id), target, at_warning, now=clock.now())
    assert key_event_reasons(observation) == ("budget",)
    store.close()


def test_run_end_fires_once_a_finished_turn_stays_idle(live: Live, clock: ManualClock) -> None:
    live.user("fix it").reply("Done.")
    session = session_for("run_end")
    clock.advance(RUN_END_IDLE.total_seconds() - 1)
    assert fired_triggers(session, seen(live, clock, 0)) == ()
    clock.advance(1)
    assert fired_triggers(session, seen(live, clock, 0)) == ("run_end",)


def test_run_end_does_not_fire_while_a_call_is_unanswered(live: Live, clock: ManualClock) -> None:
    live.user("deploy").reply("Deploying.").call("deploy.sh", status="pending")
    clock.advance(3600)
    assert fired_triggers(session_for("run_end"), seen(live, clock, 0)) == ()


def test_run_end_fires_at_once_on_a_sub_agent_runs_stop_marker(
    tmp_path: Path, clock: ManualClock
) -> None:
    live = (
        Live(clock, subagent_run=SubagentRun(stop_kind="completed")).user("look").reply("Found it.")
    )
    live.call("grep -r TODO", status="ok")
    store = open_store(tmp_path / "p.db")
    live.save(store)
    target = Target("conversation", live.conversation_id, live.conversation_id)
    session = session_for("run_end")
    observation = observe(store.transcript(target.target_id), target, session, now=clock.now())
    assert fired_triggers(session, observation) == ("run_end",)
    store.close()


def test_run_end_of_a_task_follows_its_completion(tmp_path: Path, clock: ManualClock) -> None:
    live = Live(clock).user("do the task").reply("Working.").call("make", status="pending")
    live.tasks.append(Task(task_id="task-1", title="Build", status="in_progress"))
    store = open_store(tmp_path / "p.db")
    live.save(store)
    target = Target("task", "task-1", live.conversation_id)
    session = session_for("run_end", target_type="task", target_id="task-1")
    running = observe(store.transcript(live.conversation_id), target, session, now=clock.now())
    assert fired_triggers(session, running) == ()
    live.tasks[0] = Task(task_id="task-1", title="Build", status="completed")
    live.save(store)
    done = observe(store.transcript(live.conversation_id), target, session, now=clock.now())
    assert fired_triggers(session, done) == ("run_end",)
    store.close()


def test_manual_never_fires(live: Live, clock: ManualClock) -> None:
    live.user("x").reply("y").call("z", status="error", result="boom")
    clock.advance(3600)
    assert fired_triggers(session_for("manual"), seen(live, clock, -1)) == ()


def test_several_triggers_name_the_run_by_urgency(live: Live, clock: ManualClock) -> None:
    live.user("go").reply("Running.").call("pytest", status="error", result="boom").reply("Failed.")
    fired = fired_triggers(session_for(*ALL, every_n_steps=2), seen(live, clock, 0))
    assert fired == ("key_event", "after_reply", "every_n_steps")
