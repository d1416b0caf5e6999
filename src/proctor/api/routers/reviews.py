"""Review runs: start, pause, resume, cancel, the execution slot, list and show (REV-5, REV-6).

Starting or resuming claims the one execution slot in the request (BUSY answers 409 at
once) and answers 202 with the run; the app's background worker then reads its batches.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Body, Path, Query

from proctor.api._deps import Limit, Offset, ReaderDep, RunnerDep, StoreDep
from proctor.api._review_models import (
    ReviewExecution,
    ReviewPage,
    ReviewResume,
    ReviewRunView,
    ReviewStart,
)
from proctor.errors import ConfigError
from proctor.heartbeat import require_app
from proctor.review import (
    ReviewRequest,
    begin_resume,
    begin_review,
    cancel_review,
    open_semantic_layer,
    pause_review,
)
from proctor.store import RunStatus

router = APIRouter(prefix="/reviews", tags=["reviews"])

RunRef = Annotated[
    str, Path(min_length=1, max_length=200, description="A run id or unique prefix.")
]


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


@router.post("", status_code=202)
def start(store: StoreDep, runner: RunnerDep, body: ReviewStart) -> ReviewRunView:
    """Start a review in the background (the supervisor app must be enabled).

    Answers 202 with the run, already holding the slot; 409 when another review holds it
    (BUSY) or the app is disabled.
    """
    if body.project is not None and body.scope is not None and body.project != body.scope:
        raise ConfigError("give project or scope (they are the same), not two different names")
    require_app(store, "a manual review")
    semantic, note = open_semantic_layer(store, body.connection, use_model=body.use_model)
    request = ReviewRequest(
        project=body.project or body.scope,
        since=_utc(body.since),
        until=_utc(body.until),
        reanalyze=body.reanalyze,
        batch_size=body.batch_size,
    )
    run = begin_review(store, request, semantic=semantic, semantic_note=note)
    runner.submit(store, run, semantic)
    return ReviewRunView.of(run)


@router.get("")
def list_reviews(
    store: ReaderDep,
    status: Annotated[RunStatus | None, Query(description="Only runs in this status.")] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ReviewPage:
    """Review runs, newest first."""
    runs = store.review_runs(limit=limit + offset, status=status)[offset:]
    return ReviewPage(limit=limit, offset=offset, reviews=[ReviewRunView.of(r) for r in runs])


@router.get("/execution")
def execution(store: ReaderDep, runner: RunnerDep) -> ReviewExecution:
    """Who holds the review slot, and the holding run's phase, batches and sources read.

    When the slot is free, ``run`` is the newest run still stopping (``pausing`` /
    ``cancelling``), if any.
    """
    holder = store.review_slot_holder()
    run = None
    if holder is not None:
        run = ReviewRunView.of(store.review_run(holder))
    else:
        stopping = [r for r in store.review_runs(limit=20) if r.active]
        if stopping:
            run = ReviewRunView.of(stopping[0])
    return ReviewExecution(
        slot_holder=holder,
        in_this_server=holder is not None and runner.current() == holder,
        run=run,
    )


@router.get("/{run_ref}")
def show_review(store: ReaderDep, run_ref: RunRef) -> ReviewRunView:
    """One review run."""
    return ReviewRunView.of(store.review_run(run_ref))


@router.post("/{run_ref}/pause")
def pause(store: StoreDep, run_ref: RunRef) -> ReviewRunView:
    """Pause a running review: it stops after the batch in hand and keeps its batches."""
    return ReviewRunView.of(pause_review(store, run_ref))


@router.post("/{run_ref}/cancel")
def cancel(store: StoreDep, run_ref: RunRef) -> ReviewRunView:
    """Cancel a review; shows ``cancelling`` until its worker stopped. Cannot be resumed."""
    return ReviewRunView.of(cancel_review(store, run_ref))


@router.post("/{run_ref}/resume", status_code=202)
def resume(
    store: StoreDep,
    runner: RunnerDep,
    run_ref: RunRef,
    body: Annotated[ReviewResume | None, Body()] = None,
) -> ReviewRunView:
    """Continue a paused or failed run from its saved batches, in the background."""
    require_app(store, "resuming a review")
    connection = None if body is None else body.connection
    semantic, _ = open_semantic_layer(store, connection, use_model=True)
    run, layer = begin_resume(store, store.review_run(run_ref).run_id, semantic=semantic)
    runner.submit(store, run, layer)
    return ReviewRunView.of(run)
