"""When analyses run (SPEC SUP-1, SUP-2): off by default, throttle, coalescing, single flight.

Time is a ``ManualClock``; analyses are held in flight with anyio events. Nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import anyio
import pytest

from proctor.ingest import ingest
from proctor.store import SqlStore, open_store
from proctor.supervision import (
    LiveSupervision,
    ScheduleOutcome,
    SessionSettings,
    enable_supervision,
    on_conversations_changed,
    resolve_target,
    run_due_analyses,
    supervise_changes,
)
from proctor.supervision._sessions import disable_supervision
from tests.conftest import EXAMPLES_DIR
from tests.supervision.helpers import GatedExecutor, Live, ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "p.db")
    yield opened
    opened.close()


@pytest.fixture
def executor(store: SqlStore, clock: ManualClock) -> GatedExecutor:
    return GatedExecutor(store, clock)


@pytest.fixture
def live(store: SqlStore, clock: ManualClock) -> Live:
    conversation = Live(clock).user("Fix the invoice rounding.").reply("On it.")
    conversation.save(store)
    return conversation


def supervise(store: SqlStore, live: Live, **settings: object) -> None:
    target = resolve_target(store, live.conversation_id)
    values: dict[str, object] = {"triggers": ("after_reply",), **settings}
    enable_supervision(store, target, SessionSettings(**values), now=live.clock.now())  # type: ignore[arg-type]


def changed(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, *ids: str
) -> list[ScheduleOutcome]:
    return on_conversations_changed(store, ids or ("test:live",), clock=clock, executor=executor)


def due(store: SqlStore, clock: ManualClock, executor: GatedExecutor) -> list[ScheduleOutcome]:
    return run_due_analyses(store, clock=clock, executor=executor)


def test_supervision_is_off_by_default(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    report = ingest(store, [EXAMPLES_DIR])
    live.user("and the export?").reply("Fixed too.").save(store)
    assert changed(store, clock, executor, *report.conversation_ids, live.conversation_id) == []
    assert on_conversations_changed(store, report.conversation_ids) == []
    clock.advance(3600)
    assert due(store, clock, executor) == []
    assert executor.windows == []
    assert store.supervision_runs() == []


def test_enabling_analyses_only_new_events_and_disabling_stops_them(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    supervise(store, live)
    assert changed(store, clock, executor) == [], "enabling starts no analysis by itself"
    live.user("Also add a test.").reply("Added test_half_cent.").save(store)
    [outcome] = changed(store, clock, executor)
    assert outcome.trigger == "after_reply"
    assert outcome.result is not None and outcome.result.run.status == "ok"
    disable_supervision(store, resolve_target(store, live.conversation_id), now=clock.now())
    clock.advance(60)
    live.user("Ship it.").reply("Shipped.").save(store)
    assert changed(store, clock, executor) == []
    assert len(executor.windows) == 1


def test_triggers_within_the_throttle_make_one_later_analysis_covering_them_all(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    supervise(store, live, throttle_seconds=30)
    live.user("first").reply("reply one").save(store)
    [ran] = changed(store, clock, executor)
    assert ran.result is not None

    clock.advance(10)
    live.user("second").reply("reply two").save(store)
    [throttled] = changed(store, clock, executor)
    assert (throttled.refused, throttled.session and throttled.session.pending) == (
        "throttled",
        True,
    )
    clock.advance(10)
    live.user("third").reply("reply three").save(store)
    assert [o.refused for o in changed(store, clock, executor)] == ["throttled"]
    assert due(store, clock, executor)[0].refused == "throttled"
    assert len(executor.windows) == 1

    clock.advance(10)  # 30 s after the first analysis started
    [follow_up] = due(store, clock, executor)
    assert follow_up.result is not None
    window = executor.windows[-1]
    assert window.last_event_index == live.trace().events[-1].index
    assert all(any(text in line for line in window.lines) for text in ("reply two", "reply three"))
    clock.advance(60)
    assert due(store, clock, executor) == []
    assert changed(store, clock, executor) == []
    assert len(executor.windows) == 2


def test_events_arriving_during_an_analysis_are_coalesced_into_exactly_one_follow_up(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    supervise(store, live, throttle_seconds=30)
    live.user("go").reply("step 0").save(store)

    async def scenario() -> list[ScheduleOutcome]:
        entered, release = executor.hold(live.conversation_id)
        refused: list[ScheduleOutcome] = []
        async with anyio.create_task_group() as group:
            group.start_soon(
                partial(supervise_changes, store, ["test:live"], clock=clock, executor=executor)
            )
            await entered.wait()
            for step in range(1, 6):
                live.reply(f"step {step}").save(store)
                refused.extend(
                    await supervise_changes(store, ["test:live"], clock=clock, executor=executor)
                )
            release.set()
        return refused

    refused = anyio.run(scenario)
    assert [o.refused for o in refused] == ["running"] * 5
    first = executor.windows[0]
    assert len(executor.windows) == 1
    clock.advance(30)
    [follow_up] = due(store, clock, executor)
    assert follow_up.result is not None
    window = executor.windows[-1]
    assert window.last_event_index - first.last_event_index == 5
    assert all(any(f"step {n}" in line for line in window.lines) for n in range(1, 6))
    clock.advance(60)
    assert due(store, clock, executor) == []
    assert len(executor.windows) == 2


def test_one_analysis_per_target_at_a_time_while_different_targets_run_together(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    other = Live(clock, conversation_id="test:other").user("Refactor.").reply("Sure.")
    other.save(store)
    supervise(store, live, throttle_seconds=0)
    supervise(store, other, throttle_seconds=0)
    live.reply("done here").save(store)
    other.reply("done there").save(store)

    async def scenario() -> list[ScheduleOutcome]:
        first_in, release_first = executor.hold("test:live")
        other_in, release_other = executor.hold("test:other")
        outcomes: list[ScheduleOutcome] = []

        async def trigger(*ids: str) -> None:
            outcomes.extend(await supervise_changes(store, ids, clock=clock, executor=executor))

        async with anyio.create_task_group() as group:
            group.start_soon(trigger, "test:live")
            await first_in.wait()
            group.start_soon(trigger, "test:live")
            group.start_soon(trigger, "test:live", "test:other")
            await other_in.wait()
            assert executor.peak_total == 2
            release_other.set()
            release_first.set()
        return outcomes

    outcomes = anyio.run(scenario)
    assert executor.peak_per_target == {"test:live": 1, "test:other": 1}
    assert sorted(o.refused or "ran" for o in outcomes if o.target.target_id == "test:live") == [
        "ran",
        "running",
        "running",
    ]
    assert [r.status for r in store.supervision_runs(target_id="test:live")] == ["ok"]


def test_pending_events_are_analysed_even_when_their_trigger_no_longer_fires(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    supervise(store, live, throttle_seconds=30)
    live.user("first").reply("reply one").save(store)
    assert changed(store, clock, executor)[0].result is not None
    clock.advance(10)
    live.user("second").reply("reply two").save(store)
    assert changed(store, clock, executor)[0].refused == "throttled"
    live.call("make deploy", status="ok", result="deployed")  # the turn went on: no reply ends it
    live.save(store)
    clock.advance(20)
    [follow_up] = due(store, clock, executor)
    assert (follow_up.trigger, follow_up.result is not None) == ("pending", True)
    assert executor.windows[-1].last_event_index == live.trace().events[-1].index


def test_pending_marks_covered_by_the_run_in_flight_are_dropped_without_a_run(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    supervise(store, live, throttle_seconds=0)
    live.user("go").reply("done").save(store)

    async def scenario() -> None:
        entered, release = executor.hold(live.conversation_id)
        async with anyio.create_task_group() as group:
            group.start_soon(
                partial(supervise_changes, store, ["test:live"], clock=clock, executor=executor)
            )
            await entered.wait()
            again = await supervise_changes(store, ["test:live"], clock=clock, executor=executor)
            assert [o.refused for o in again] == ["running"]
            release.set()

    anyio.run(scenario)
    session = store.supervision_session(live.conversation_id)
    assert session is not None and not session.pending
    clock.advance(60)
    assert due(store, clock, executor) == []
    assert len(executor.windows) == 1


def test_a_long_running_process_looks_for_due_analyses_at_most_every_tick(
    store: SqlStore, clock: ManualClock, executor: GatedExecutor, live: Live
) -> None:
    supervise(store, live, throttle_seconds=30)
    watcher = LiveSupervision(store, clock=clock, executor=executor, tick_seconds=5)
    live.user("first").reply("reply one").save(store)
    assert watcher.changed(["test:live"])[0].result is not None
    clock.advance(10)
    live.user("second").reply("reply two").save(store)
    assert watcher.changed(["test:live"])[0].refused == "throttled"
    clock.advance(18)
    assert watcher.tick()[0].refused == "throttled"
    clock.advance(2)  # due now, but the last look was 2 s ago
    assert watcher.tick() == []
    clock.advance(3)
    assert watcher.tick()[0].result is not None
    assert len(executor.windows) == 2
