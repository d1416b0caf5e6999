"""What each job does, whoever executes it: plain functions over a store.

The procrastinate tasks (``_queue.py``) and the in-process executor (``_inprocess.py``)
both call these, so a review, an analysis, a phrasing retry or a heartbeat tick does the
same work on SQLite and on PostgreSQL.

A review job continues a run that already exists. Either the API claimed the run's slot
in the request and hands it over (``handed_by``: the API process takes no other part),
or the worker that held it died and the job is retried: the run is then still
``running`` under a dead holder, or ``failed`` as interrupted, and its saved batches are
kept, so the new worker reads only what the dead one had not saved (REV-5). The slot
claim and the publish transaction's one-result-per-run check hold across processes, so
a run is never executed by two live workers nor published twice.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from proctor._util.clock import utcnow
from proctor.errors import (
    RETRYABLE_MODEL_ERRORS,
    BusyError,
    ModelError,
    ModelErrorKind,
    ProctorError,
    ReviewStateError,
    StoreError,
)
from proctor.heartbeat import app_enabled, run_due, worker_owner
from proctor.review import SemanticLayer, execute_review, open_semantic_layer
from proctor.store import ReviewRunRecord, RunStatus, SqlStore

log = logging.getLogger("proctor.jobs")

TRANSIENT_MODEL_KINDS: frozenset[ModelErrorKind] = RETRYABLE_MODEL_ERRORS | {"timeout"}
"""ModelError kinds worth retrying as a job: the retryable ones, and a timeout (the model
caller does not retry one at once, but the same call may well succeed a little later)."""

INTERRUPTED = "interrupted"
"""How ``fail_interrupted_reviews`` starts the error of a run whose process stopped."""


class ExecutingElsewhere(BusyError):
    """The run is executing in another live worker. The job is retried until that worker
    stops: when it finished the run, the retry has nothing to do; when it died (killed,
    machine lost), the retry resumes the run. Ending the job here instead would leave a
    run whose worker then dies with no job to finish it (a worker whose heartbeat lapsed
    under load has its job handed to a second worker while it still executes)."""


def is_transient(error: BaseException) -> bool:
    """Whether a job that raised ``error`` should be retried later."""
    if isinstance(error, ModelError):
        return error.kind in TRANSIENT_MODEL_KINDS
    return isinstance(error, StoreError | BusyError)


@dataclass(frozen=True, slots=True)
class ReviewJobOutcome:
    """How one review job ended."""

    run_id: str
    status: RunStatus
    """The run's status afterwards (``completed``, ``no_change``, ``paused`` …)."""
    executed: bool
    """False when there was nothing for this job to do (see ``note``)."""
    note: str = ""


def connection_name(semantic: SemanticLayer | None) -> str | None:
    """The model connection a semantic layer was opened on (its label is ``name/model``)."""
    if semantic is None:
        return None
    return semantic.model_label.split("/", 1)[0]


def run_review_job(
    store: SqlStore,
    run_id: str,
    *,
    handed_by: str | None,
    connection: str | None,
    retried: bool,
) -> ReviewJobOutcome:
    """Execute review run ``run_id`` to its end (or pause/cancel) in this process.

    ``retried``: this job ran before and stopped on a transient error, or its worker
    died; a ``failed`` run is then resumed. Transient errors are raised (the queue
    retries); any other error is already recorded on the run and is not.
    """
    run = store.review_run(run_id)
    if run.result_id is not None or run.status not in ("running", "failed"):
        return ReviewJobOutcome(run.run_id, run.status, False, "nothing to do")
    resumable: tuple[str, ...] = ()
    if run.status == "failed":
        if not retried and not (run.error or "").startswith(INTERRUPTED):
            return ReviewJobOutcome(run.run_id, run.status, False, run.error or "")
        resumable = ("failed",)
    stages = run.options.get("stages", ["structural"])
    semantic: SemanticLayer | None = None
    if "semantic" in stages:
        semantic, _ = open_semantic_layer(store, connection)
        if semantic is None:
            raise ReviewStateError(
                f"review run {run.run_id[:8]} needs a model connection and none is configured "
                "on this worker; configure one (`proctor models`) and resume it"
            )
    try:
        claimed = _claim(store, run.run_id, resumable, handed_by)
    except BusyError:
        if store.review_slot_held(run.run_id):
            raise ExecutingElsewhere(
                f"review run {run.run_id[:8]} is executing in another worker; "
                "this job checks again until that worker stops"
            ) from None
        holder = store.review_slot_holder(run.scope_key)
        if holder is None or store.review_run(holder).scope_key != run.scope_key:
            raise  # every slot is taken: the queue retries later
        # A newer run of the scope started meanwhile and reads what this one left: waiting
        # for it here would hold up the scope's queue, so this run stays resumable.
        store.fail_interrupted_reviews()
        note = f"run {holder[:8]} of the same scope is executing; resume this one later"
        return ReviewJobOutcome(run.run_id, store.review_run(run.run_id).status, False, note)
    try:
        final = execute_review(store, claimed, semantic)
    except ProctorError as exc:
        if is_transient(exc):
            raise
        log.warning("review run %s failed: %s", run.run_id[:8], exc)
        return ReviewJobOutcome(run.run_id, store.review_run(run.run_id).status, True, str(exc))
    return ReviewJobOutcome(final.run_id, final.status, True)


def _claim(
    store: SqlStore, run_id: str, resumable: tuple[str, ...], handed_by: str | None
) -> ReviewRunRecord:
    """The slot for ``run_id``. A run read as ``running`` may have been found interrupted
    since (its executor, this job's earlier attempt, died and another process noticed
    first): it is then resumed as the retry of an interrupted run is."""
    try:
        return store.claim_review_slot(run_id, resumable_from=resumable, handed_by=handed_by)
    except ReviewStateError:
        now = store.review_run(run_id)
        if "failed" in resumable or now.status != "failed":
            raise
        if not (now.error or "").startswith(INTERRUPTED):
            raise
        return store.claim_review_slot(run_id, resumable_from=("failed",), handed_by=handed_by)


def run_analyses_job(store: SqlStore, conversation_ids: Sequence[str]) -> int:
    """Run the analyses that new events of ``conversation_ids`` call for; how many ran."""
    from proctor.supervision import on_conversations_changed

    outcomes = on_conversations_changed(store, list(conversation_ids))
    return sum(1 for outcome in outcomes if outcome.result is not None)


def run_due_analyses_job(store: SqlStore) -> int:
    """Start pending analyses that may start now; how many ran."""
    from proctor.supervision import run_due_analyses

    return sum(1 for outcome in run_due_analyses(store) if outcome.result is not None)


def run_phrasing_job(store: SqlStore, heartbeat_id: str) -> int:
    """Make a heartbeat run's suggestions again (one phrasing call); how many are open."""
    from proctor.heartbeat.suggestions import open_phrasing, retry_suggestions

    return retry_suggestions(store, heartbeat_id, open_phrasing(store)).open_now


def run_heartbeat_tick(store: SqlStore) -> int:
    """One heartbeat pass: run the plans due now (none while the app is off); how many."""
    if not app_enabled(store):
        return 0
    return len(run_due(store, now=utcnow(), owner=worker_owner(), clock=utcnow))
