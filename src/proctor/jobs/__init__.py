"""Where background work runs: in this process (SQLite) or on workers (PostgreSQL).

One interface — :class:`Jobs`: ``submit_review`` (a run the caller claimed),
``submit_analyses`` (conversations with new events), ``submit_phrasing`` (retry a
heartbeat run's suggestions), ``submit_heartbeat_tick`` — with two executors:

* :class:`InProcessJobs` on the embedded SQLite store (STO-1): reviews on one background
  thread, everything else a direct call; analyses live intake calls for go to an
  :class:`AnalysisQueue` of the process instead (``queue_analyses``);
* :class:`JobQueue` on PostgreSQL (STO-2): each is a procrastinate job that any
  ``proctor worker`` process on any machine executes, with per-scope locks, queueing
  locks that coalesce repeated triggers, retries of transient failures, a periodic
  heartbeat and stalled-job recovery (see ``_queue.py``).

:func:`jobs_for` picks by the store's database. The work itself (``_work.py``) is the
same either way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from proctor.errors import ConfigError
from proctor.jobs._inprocess import AnalysisQueue, InProcessJobs, ReviewThread
from proctor.jobs._manual import manual_key, run_manual_analyses
from proctor.jobs._queue import (
    JobQueue,
    build_worker_app,
    ensure_job_schema,
    run_worker,
)
from proctor.jobs._work import (
    ExecutingElsewhere,
    ReviewJobOutcome,
    is_transient,
    run_review_job,
)
from proctor.review import SemanticLayer
from proctor.store import ReviewRunRecord, SqlStore
from proctor.supervision import ScheduleOutcome, queued_analyses


class Jobs(Protocol):
    """Submit background work; where it runs is the executor's business."""

    def submit_review(
        self, run: ReviewRunRecord, semantic: SemanticLayer | None, handed_by: str
    ) -> object:
        """Execute a run whose slot ``handed_by`` (this process, ``host:pid``) claimed."""
        ...

    def submit_analyses(self, conversation_ids: Sequence[str]) -> int:
        """Analyse what the conversations' new events call for."""
        ...

    def submit_phrasing(self, heartbeat_id: str) -> object:
        """Retry one heartbeat run's suggestions."""
        ...

    def submit_heartbeat_tick(self) -> object:
        """Run a heartbeat pass (due plans)."""
        ...


JOBS_VARIABLE = "PROCTOR_JOBS"
"""``queue`` (the default on PostgreSQL) or ``inprocess``: where background work runs."""


def uses_queue(store: SqlStore) -> bool:
    """Whether background work on this store goes to workers (PostgreSQL) or runs here.

    ``PROCTOR_JOBS=inprocess`` keeps it in the process on PostgreSQL too (one machine,
    no workers); a queue needs PostgreSQL, so ``queue`` on SQLite is refused.
    """
    choice = os.environ.get(JOBS_VARIABLE, "").strip().lower()
    if choice not in ("", "queue", "inprocess"):
        raise ConfigError(f"{JOBS_VARIABLE} must be `queue` or `inprocess`, not {choice!r}")
    if store.dialect != "postgresql":
        if choice == "queue":
            raise ConfigError(
                f"{JOBS_VARIABLE}=queue needs PostgreSQL (PROCTOR_DATABASE_URL); the embedded "
                "SQLite store runs background work in process"
            )
        return False
    return choice != "inprocess"


_queues: dict[str, JobQueue] = {}


def queue_for(store: SqlStore) -> JobQueue:
    """The process's job queue on the store's PostgreSQL database (made on first use)."""
    url = store.database_url()
    queue = _queues.get(url)
    if queue is None:
        queue = _queues.setdefault(url, JobQueue(url))
    return queue


def jobs_for(store: SqlStore) -> Jobs:
    """The executor for this store: the job queue on PostgreSQL, in-process on SQLite."""
    if uses_queue(store):
        return queue_for(store)
    return InProcessJobs(store)


def queue_analyses(
    store: SqlStore, conversation_ids: Sequence[str], in_process: AnalysisQueue
) -> list[ScheduleOutcome]:
    """After intake stored new events: queue the analyses they may call for; never wait.

    On PostgreSQL each conversation gets a ``proctor.supervise`` job (``proctor worker``
    runs it); on SQLite (or ``PROCTOR_JOBS=inprocess``) ``in_process`` runs it in the
    background of this process. Returns one ``queued`` outcome per enabled session the
    conversations hold; with none (supervision is off by default) nothing is queued.
    """
    outcomes = queued_analyses(store, conversation_ids)
    if outcomes:
        if uses_queue(store):
            queue_for(store).submit_analyses(conversation_ids)
        else:
            in_process.submit(conversation_ids)
    return outcomes


__all__ = [
    "JOBS_VARIABLE",
    "AnalysisQueue",
    "ExecutingElsewhere",
    "InProcessJobs",
    "JobQueue",
    "Jobs",
    "ReviewJobOutcome",
    "ReviewThread",
    "build_worker_app",
    "ensure_job_schema",
    "is_transient",
    "jobs_for",
    "manual_key",
    "queue_analyses",
    "queue_for",
    "run_manual_analyses",
    "run_review_job",
    "run_worker",
    "uses_queue",
]
