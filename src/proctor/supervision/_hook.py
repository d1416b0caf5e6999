"""Where new events meet live supervision: called after ingest and watch write conversations.

``on_conversations_changed`` looks only at enabled sessions whose target lies in the
changed conversations; with none (supervision is off by default) it returns at once,
without loading anything. For each session it reads the target's trace, asks the trigger
policy whether the new events fire one of the session's triggers (or whether events are
still pending from a refused request) and asks the scheduler for an analysis. Different
targets are analysed concurrently; model calls still queue in the supervisor's own pool.

``run_due_analyses`` is the timer's half: a long-running process (``proctor watch``)
calls it while idle so that pending analyses start once their throttle or budget period
allows, and idle runs are recognised as ended (``run_end``).

Live intake never waits for an analysis: it queues ``on_conversations_changed`` as a
background job (``proctor.jobs.queue_analyses``) and answers with ``queued_analyses``,
one ``queued`` outcome per session concerned, at the cost of one query.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Literal

import anyio

from proctor.errors import ProctorError
from proctor.store import RunTrigger, SupervisionSession
from proctor.supervision._scheduler import (
    Clock,
    Executor,
    ScheduleOutcome,
    Scheduler,
    SystemClock,
)
from proctor.supervision._sessions import SessionStore, Target, target_of
from proctor.supervision._triggers import fired_triggers, observe

QUEUED: Literal["queued"] = "queued"
"""``ScheduleOutcome.refused`` of an analysis queued to run in the background."""


async def supervise_changes(
    store: SessionStore,
    conversation_ids: Sequence[str],
    *,
    clock: Clock,
    executor: Executor,
) -> list[ScheduleOutcome]:
    """Fire the triggers of the enabled sessions inside ``conversation_ids`` (async core)."""
    sessions = store.supervision_sessions(conversation_ids=conversation_ids, enabled_only=True)
    return await _supervise_sessions(store, sessions, clock=clock, executor=executor)


def queued_analyses(store: SessionStore, conversation_ids: Sequence[str]) -> list[ScheduleOutcome]:
    """One ``queued`` outcome per enabled session inside ``conversation_ids``.

    What a caller that queues ``on_conversations_changed`` instead of running it reports;
    the trigger is decided when the job reads the conversation (``none`` until then).
    Empty, without loading anything else, when no session is enabled there.
    """
    if not conversation_ids:
        return []
    outcomes: list[ScheduleOutcome] = []
    for session in store.supervision_sessions(conversation_ids=conversation_ids, enabled_only=True):
        try:
            target = target_of(store, session)
        except ProctorError as exc:
            where = Target("conversation", session.target_id, session.target_id)
            outcomes.append(ScheduleOutcome(where, "none", session=session, error=str(exc)))
            continue
        outcomes.append(ScheduleOutcome(target, "none", refused=QUEUED, session=session))
    return outcomes


async def supervise_due(
    store: SessionStore, *, clock: Clock, executor: Executor
) -> list[ScheduleOutcome]:
    """Start pending analyses that may start now and recognise idle runs that ended."""
    sessions = [
        s
        for s in store.supervision_sessions(enabled_only=True)
        if s.pending or "run_end" in s.triggers
    ]
    return await _supervise_sessions(store, sessions, clock=clock, executor=executor)


def on_conversations_changed(
    store: SessionStore,
    conversation_ids: Sequence[str],
    *,
    clock: Clock | None = None,
    executor: Executor | None = None,
) -> list[ScheduleOutcome]:
    """After ingest/watch wrote ``conversation_ids``: run the analyses their new events call for.

    Blocks until the analyses that start now have ended; throttled, in-flight and
    budget-paused targets are marked pending instead. Returns one outcome per request.
    """
    if not conversation_ids or not store.supervision_sessions(
        conversation_ids=conversation_ids, enabled_only=True
    ):
        return []
    chosen_clock = clock or SystemClock()
    run = partial(
        supervise_changes,
        store,
        conversation_ids,
        clock=chosen_clock,
        executor=executor or _model_executor(store, chosen_clock),
    )
    return anyio.run(run)


def run_due_analyses(
    store: SessionStore, *, clock: Clock | None = None, executor: Executor | None = None
) -> list[ScheduleOutcome]:
    """The idle tick of a long-running process: see ``supervise_due``."""
    if not any(
        s.pending or "run_end" in s.triggers for s in store.supervision_sessions(enabled_only=True)
    ):
        return []
    chosen_clock = clock or SystemClock()
    run = partial(
        supervise_due,
        store,
        clock=chosen_clock,
        executor=executor or _model_executor(store, chosen_clock),
    )
    return anyio.run(run)


def _model_executor(store: SessionStore, clock: Clock) -> Executor:
    # Imported here: the model layer (httpx) is only needed once a session exists.
    from proctor.supervision._execute import ModelExecutor

    return ModelExecutor(store, clock=clock)


async def _supervise_sessions(
    store: SessionStore,
    sessions: Sequence[SupervisionSession],
    *,
    clock: Clock,
    executor: Executor,
) -> list[ScheduleOutcome]:
    scheduler = Scheduler(store, clock=clock, executor=executor)
    outcomes: list[ScheduleOutcome] = []

    async def supervise_one(session: SupervisionSession) -> None:
        outcomes.extend(await _supervise_session(scheduler, session))

    async with anyio.create_task_group() as group:
        for session in sessions:
            group.start_soon(supervise_one, session)
    return outcomes


async def _supervise_session(
    scheduler: Scheduler, session: SupervisionSession
) -> list[ScheduleOutcome]:
    """Request what the session's new events call for; after a run, look again: events
    that arrived during it may start a follow-up now (or stay pending for the timer)."""
    outcomes: list[ScheduleOutcome] = []
    while True:
        decision = _next_request(scheduler, session)
        if isinstance(decision, ScheduleOutcome):
            return [*outcomes, decision]
        if decision is None:
            return outcomes
        target, trigger = decision
        outcome = await scheduler.request(target, trigger)
        outcomes.append(outcome)
        if outcome.result is None or outcome.session is None or not outcome.session.pending:
            return outcomes
        session = outcome.session


def _next_request(
    scheduler: Scheduler, session: SupervisionSession
) -> tuple[Target, RunTrigger] | ScheduleOutcome | None:
    """The trigger to request for, an error outcome, or None when nothing is due."""
    store = scheduler.store
    target: Target | None = None
    try:
        target = target_of(store, session)
        transcript = store.transcript(target.conversation_id)
        observation = observe(transcript, target, session, now=scheduler.clock.now())
    except ProctorError as exc:
        # One unreadable target (deleted conversation, broken policy file) stops only itself.
        where = target or Target("conversation", session.target_id, session.target_id)
        return ScheduleOutcome(where, "none", session=session, error=str(exc))
    fired = fired_triggers(session, observation)
    if fired:
        return target, fired[0]
    if session.pending and observation.latest_index > session.last_event_index:
        return target, "pending"
    if session.pending:
        # The events behind it were already covered by the run that was in flight.
        store.clear_supervision_pending(session.session_id, now=scheduler.clock.now())
    return None


class LiveSupervision:
    """Live supervision for a long-running process (``proctor watch``).

    One executor — so one model pool — serves the whole process, and the idle tick
    looks for due analyses at most every ``tick_seconds`` (monotonic time).
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        clock: Clock | None = None,
        executor: Executor | None = None,
        tick_seconds: float = 5.0,
    ) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self.tick_seconds = tick_seconds
        self._executor = executor
        self._last_tick: float | None = None

    def changed(self, conversation_ids: Sequence[str]) -> list[ScheduleOutcome]:
        """After an import wrote ``conversation_ids``: see ``on_conversations_changed``."""
        return on_conversations_changed(
            self.store, conversation_ids, clock=self.clock, executor=self._shared_executor()
        )

    def tick(self) -> list[ScheduleOutcome]:
        """While idle: start due analyses, unless the last look was under ``tick_seconds`` ago."""
        now = self.clock.monotonic()
        if self._last_tick is not None and now - self._last_tick < self.tick_seconds:
            return []
        self._last_tick = now
        return run_due_analyses(self.store, clock=self.clock, executor=self._shared_executor())

    def _shared_executor(self) -> Executor | None:
        # Created on first use with a session present: without one nothing needs a model.
        if self._executor is None and self.store.supervision_sessions(enabled_only=True):
            self._executor = _model_executor(self.store, self.clock)
        return self._executor
