"""When analyses run (SPEC SUP-2, SUP-9): throttle, single flight, coalescing, budget.

Every decision is taken inside the store's claiming transaction, so it holds across
processes (``proctor watch`` and ``proctor supervise run`` on one database) and needs no
state in memory:

* single flight — a target with a run in flight gets no second run; the request marks
  the session pending instead;
* throttle — an automatic run starts at least ``throttle_seconds`` after the previous
  run of the target started; an earlier request marks the session pending;
* coalescing — pending means "events no analysis has covered"; the next run that starts
  clears it and, reading the target as it is then, covers every event that arrived
  meanwhile: one later analysis for any number of refused requests;
* budget — when the calls or tokens of the current period reach the session's budget,
  the session shows ``paused: budget``, the request is kept pending and no call is made
  until the period rolls over.

Manual runs (``proctor supervise run``) skip the throttle, never the budget or the
single-flight rule. All time comes from an injectable ``Clock``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from proctor._util.clock import utcnow
from proctor.findings import Finding
from proctor.store import (
    ClaimPolicy,
    ClaimVerdict,
    ClaimView,
    Refusal,
    RunClaim,
    RunTrigger,
    SupervisionRun,
    SupervisionSession,
)
from proctor.supervision._sessions import (
    ACTIVE,
    PAUSED_BUDGET,
    SessionStore,
    Target,
    budget_period,
    budget_spent,
    session_mode,
)
from proctor.supervisor import Mode

STALE_AFTER = timedelta(seconds=2 * 600 + 60)
"""A run still marked running after this was abandoned: one analysis is at most two
model stages (answer and repair) of at most 600 s each."""


class Clock(Protocol):
    """Where the scheduler reads time: wall time for what is stored, a monotonic clock for durations."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        return utcnow()

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()


@dataclass(frozen=True, slots=True)
class Analysis:
    """A run that was claimed and must now be carried out."""

    run: SupervisionRun
    target: Target
    mode: Mode


@dataclass(frozen=True, slots=True)
class AnalysisResult:
    """How an analysis ended."""

    run: SupervisionRun
    """The run as recorded when it ended (status ``ok``, ``unavailable`` or ``failed``)."""
    findings: tuple[Finding, ...] = ()
    new_findings: tuple[str, ...] = ()
    """Keys of findings recorded for the first time."""
    seconds: float = 0.0
    config_error: bool = False
    """The run failed on a setting the user must fix (e.g. a broken pinned connection)."""


class Executor(Protocol):
    """Carries out one claimed analysis and records how it ended."""

    async def execute(self, analysis: Analysis) -> AnalysisResult:
        """Analyse, record the run's end and its findings, return the result."""
        ...


@dataclass(frozen=True, slots=True)
class ScheduleOutcome:
    """What one request for an analysis led to: a run, or the reason it did not start."""

    target: Target
    trigger: RunTrigger | Literal["none"]
    """The trigger the request was for; ``none`` when no trigger fired (queued, or failed)."""
    result: AnalysisResult | None = None
    refused: Refusal | Literal["queued"] | None = None
    """``running``, ``throttled``, ``budget`` or ``disabled`` when no run started;
    ``queued`` when it was queued to run in the background (live intake)."""
    session: SupervisionSession | None = None
    """The session after the request."""
    error: str | None = None
    """Why the target could not even be looked at (e.g. its conversation was deleted)."""


def admission(now: datetime, *, manual: bool) -> ClaimPolicy:
    """The claim policy: single flight, enabled, budget, then (automatic runs only) throttle."""

    def decide(view: ClaimView) -> ClaimVerdict:
        session = view.session
        if view.running is not None:
            return ClaimVerdict("running", mark_pending=not manual)
        if session is None:
            return ClaimVerdict() if manual else ClaimVerdict("disabled")
        if not session.enabled and not manual:
            return ClaimVerdict("disabled")
        # A disabled session (manual runs only) keeps showing "disabled".
        active, paused = (ACTIVE, PAUSED_BUDGET) if session.enabled else (None, None)
        start, _ = budget_period(session, now)
        if budget_spent(session, view.usage_since(start)):
            return ClaimVerdict("budget", mark_pending=not manual, state=paused)
        throttle = timedelta(seconds=session.throttle_seconds)
        if not manual and session.last_run_at is not None and now < session.last_run_at + throttle:
            return ClaimVerdict("throttled", mark_pending=True, state=active)
        return ClaimVerdict(state=active)

    return decide


class Scheduler:
    """Claims runs under the rules above and hands them to an executor."""

    def __init__(self, store: SessionStore, *, clock: Clock, executor: Executor) -> None:
        self.store = store
        self.clock = clock
        self.executor = executor

    async def request(
        self,
        target: Target,
        trigger: RunTrigger,
        *,
        mode: Mode | None = None,
        manual: bool = False,
    ) -> ScheduleOutcome:
        """Run an analysis of ``target`` now if the rules allow it, else say why not."""
        now = self.clock.now()
        session = self.store.supervision_session(target.target_id)
        chosen: Mode = mode or (session_mode(session) if session is not None else "general")
        claim = self.store.claim_supervision_run(
            RunClaim(target.target_id, trigger, chosen, now, now - STALE_AFTER),
            admission(now, manual=manual),
        )
        if claim.run is None:
            return ScheduleOutcome(
                target, trigger, refused=claim.verdict.refused, session=claim.session
            )
        result = await self.executor.execute(Analysis(claim.run, target, chosen))
        return ScheduleOutcome(
            target, trigger, result=result, session=self.store.supervision_session(target.target_id)
        )
