"""Due processing (SPEC HB-1, HB-3, HB-4): claim due plans, review, suggest, release.

``run_due`` is one pass of the scheduler loop that ``proctor worker`` (and later
``proctor serve``) runs. While the app is disabled it claims nothing. Each due plan is
claimed with a lease, then reviewed through the one review pipeline with trigger
``heartbeat`` (which waits for the execution slot); the heartbeat never reads source text
itself. A review that found nothing new is ``no_change`` with no model call. A review that
published a result is followed, for ``suggest`` plans, by the suggestion step — whose
failure is recorded as ``suggestions_failed`` and never touches the published result.

A pass that stops half-way (the process dies) leaves its lease to expire; the plan is
then claimed again with the attempt counted up.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from proctor.errors import ProctorError
from proctor.heartbeat._app import app_enabled, require_app
from proctor.heartbeat._recurrence import next_run_at
from proctor.review import ReviewRequest, SemanticLayer, open_semantic_layer, start_review
from proctor.store import Claim, HeartbeatPlan, HeartbeatStatus, ReviewRunRecord, Store

if TYPE_CHECKING:
    from proctor.heartbeat.suggestions import Phrasing

DEFAULT_LEASE_SECONDS = 2 * 60 * 60.0
"""How long a claim holds a plan: longer than a review normally takes, short enough that a
crashed worker's plan runs again the same morning."""

SemanticFactory = Callable[[], tuple[SemanticLayer | None, str | None]]
"""Opens the review's semantic layer (or None and why) when a review is about to run."""

PhrasingFactory = Callable[[], "Phrasing | None"]
"""Opens the suggestion phrasing call (or None: rule text only)."""


@dataclass(frozen=True, slots=True)
class HeartbeatOutcome:
    """What one heartbeat run did."""

    heartbeat_id: str
    plan_name: str
    status: HeartbeatStatus
    """``completed``, ``no_change``, ``suggestions_failed``, ``failed``, ``paused``, ``cancelled``."""
    attempt: int
    review_run_id: str | None
    result_id: str | None
    model_calls: int
    """Review calls plus the phrasing call, if there was one."""
    suggestions: int
    """Suggestions created or reopened."""
    error: str | None


def worker_owner() -> str:
    """This process as a lease owner: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_due(
    store: Store,
    *,
    now: datetime,
    owner: str,
    semantic_factory: SemanticFactory | None = None,
    phrasing_factory: PhrasingFactory | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    clock: Callable[[], datetime] | None = None,
    slot_wait_seconds: float = 3600.0,
) -> list[HeartbeatOutcome]:
    """Run every plan due at ``now``, one after the other; nothing while the app is off.

    Plans are claimed one at a time, so a lease starts when its plan's work starts.
    ``clock`` (default: ``now`` fixed) stamps leases and finish times.
    """
    tick = clock or (lambda: now)
    outcomes: list[HeartbeatOutcome] = []
    while app_enabled(store):
        claims = store.claim_due_plans(now, owner, lease_seconds, next_run=_next_run, limit=1)
        if not claims:
            break
        outcomes.append(
            _fire(store, claims[0], tick, semantic_factory, phrasing_factory, slot_wait_seconds)
        )
    return outcomes


def run_now(
    store: Store,
    plan_ref: str,
    *,
    now: datetime,
    owner: str,
    semantic_factory: SemanticFactory | None = None,
    phrasing_factory: PhrasingFactory | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    clock: Callable[[], datetime] | None = None,
    slot_wait_seconds: float = 3600.0,
) -> HeartbeatOutcome:
    """Run one plan now, out of schedule (``proctor plans run-now``); refused while off."""
    require_app(store, "running a plan now")
    claim = store.claim_plan_now(plan_ref, now, owner, lease_seconds)
    tick = clock or (lambda: now)
    return _fire(store, claim, tick, semantic_factory, phrasing_factory, slot_wait_seconds)


def _next_run(plan: HeartbeatPlan, after: datetime) -> datetime:
    return next_run_at(plan, after)


def _fire(
    store: Store,
    claim: Claim,
    tick: Callable[[], datetime],
    semantic_factory: SemanticFactory | None,
    phrasing_factory: PhrasingFactory | None,
    slot_wait_seconds: float,
) -> HeartbeatOutcome:
    """Review the claimed plan and record what happened; the lease is freed at the end."""
    plan = claim.plan
    heartbeat_id = claim.heartbeat_id
    store.set_heartbeat_outcome(heartbeat_id, status="running", phase="reviewing", finished=False)
    seen: list[ReviewRunRecord] = []
    try:
        outcome = _review_and_suggest(
            store, claim, tick, semantic_factory, phrasing_factory, slot_wait_seconds, seen
        )
    except ProctorError as exc:
        review_run_id = seen[-1].run_id if seen else None
        store.set_heartbeat_outcome(
            heartbeat_id,
            status="failed",
            phase="done",
            error=str(exc),
            review_run_id=review_run_id,
            at=tick(),
        )
        outcome = HeartbeatOutcome(
            heartbeat_id, plan.name, "failed", claim.attempt, review_run_id, None, 0, 0, str(exc)
        )
    except Exception as exc:
        # A bug, not a bad run: record it, free the plan, and let it surface.
        store.set_heartbeat_outcome(
            heartbeat_id, status="failed", phase="done", error=repr(exc), at=tick()
        )
        store.release_plan_lease(plan.plan_id, claim.owner, at=tick())
        raise
    store.release_plan_lease(plan.plan_id, claim.owner, at=tick())
    return outcome


def _review_and_suggest(
    store: Store,
    claim: Claim,
    tick: Callable[[], datetime],
    semantic_factory: SemanticFactory | None,
    phrasing_factory: PhrasingFactory | None,
    slot_wait_seconds: float,
    seen: list[ReviewRunRecord],
) -> HeartbeatOutcome:
    plan = claim.plan
    heartbeat_id = claim.heartbeat_id
    since = None
    if plan.window_hours is not None:
        since = claim.due_at - timedelta(hours=plan.window_hours)
    semantic, note = semantic_factory() if semantic_factory else open_semantic_layer(store, None)
    request = ReviewRequest(project=plan.project_name, since=since, trigger="heartbeat")
    run = start_review(
        store,
        request,
        semantic=semantic,
        semantic_note=note,
        progress=seen.append,
        slot_wait_seconds=slot_wait_seconds,
    )

    def done(
        status: HeartbeatStatus, *, suggestions: int = 0, calls: int = 0, error: str | None = None
    ) -> HeartbeatOutcome:
        store.set_heartbeat_outcome(
            heartbeat_id,
            status=status,
            phase="done",
            suggestions=suggestions,
            error=error,
            review_run_id=run.run_id,
            result_id=run.result_id,
            at=tick(),
        )
        return HeartbeatOutcome(
            heartbeat_id,
            plan.name,
            status,
            claim.attempt,
            run.run_id,
            run.result_id,
            run.model_calls + calls,
            suggestions,
            error,
        )

    if run.status == "no_change":
        return done("no_change")
    if run.status != "completed" or run.result_id is None:
        status = run.status if run.status in {"paused", "cancelled"} else "failed"
        return done(status, error=run.error or f"the review ended {run.status}")
    if plan.intervention != "suggest":
        return done("completed")
    from proctor.heartbeat.suggestions import make_suggestions, open_phrasing

    store.set_heartbeat_outcome(
        heartbeat_id,
        status="running",
        phase="suggesting",
        review_run_id=run.run_id,
        result_id=run.result_id,
        finished=False,
    )
    try:
        phrasing = phrasing_factory() if phrasing_factory else open_phrasing(store)
        made = make_suggestions(
            store, result_id=run.result_id, heartbeat_id=heartbeat_id, phrasing=phrasing
        )
    except ProctorError as exc:  # SuggestionError, or the phrasing model's settings
        return done("suggestions_failed", error=str(exc))
    return done("completed", suggestions=made.created + made.reopened, calls=made.calls)
