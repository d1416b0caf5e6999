"""Jobs on procrastinate, the PostgreSQL task queue (STO-2), for ``PROCTOR_DATABASE_URL``.

Tasks (each a function of ``_work.py``):

* ``proctor.review`` — execute a review run. ``lock`` = its scope, so runs of one scope
  run one after another in the order they were submitted; ``queueing_lock`` = its run
  id, so a run is queued once. Retried on transient errors and when its worker died.
* ``proctor.supervise`` — the analyses new events of one conversation call for.
  ``lock`` and ``queueing_lock`` = the conversation: one analysis job per conversation in
  flight, and any number of triggers while one waits coalesce into it (it reads the
  conversation as it is when it starts). Throttle, budget and single flight per target
  stay in the store's claiming transaction (SUP-2).
* ``proctor.phrase_suggestions`` — retry one heartbeat run's suggestions (HB-6).
* ``proctor.heartbeat_tick`` — periodic, every minute: claim due plans with their leases
  (HB-3) and run them; ``lock`` + ``queueing_lock`` make ticks single-flight.
* ``proctor.supervise_due`` — periodic, every 10 s: pending analyses that may start now.
* ``proctor.retry_stalled`` — periodic, every 5 s: jobs whose worker stopped beating
  (killed, machine lost) go back to the queue: procrastinate's own stalled-job recovery
  (``JobManager.get_stalled_jobs`` + ``retry_job``), not a lease of Proctor's.

procrastinate's schema lives next to Proctor's tables and is created by
:func:`ensure_job_schema` (``proctor worker`` calls it on start; it is idempotent and
serialised by an advisory lock, so any number of workers may start at once).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from proctor.errors import ConfigError, ProctorError
from proctor.jobs._work import (
    ExecutingElsewhere,
    connection_name,
    is_transient,
    run_analyses_job,
    run_due_analyses_job,
    run_heartbeat_tick,
    run_phrasing_job,
    run_review_job,
)
from proctor.review import SemanticLayer
from proctor.store import ReviewRunRecord, SqlStore, open_store

log = logging.getLogger("proctor.jobs")

REVIEW_TASK = "proctor.review"
ANALYSIS_TASK = "proctor.supervise"
DUE_ANALYSES_TASK = "proctor.supervise_due"
PHRASING_TASK = "proctor.phrase_suggestions"
HEARTBEAT_TASK = "proctor.heartbeat_tick"
STALLED_TASK = "proctor.retry_stalled"

STALL_VARIABLE = "PROCTOR_WORKER_STALL_SECONDS"
"""A worker silent this long is taken for dead and its jobs are retried (default 30)."""

MAX_ATTEMPTS = 6
_T = TypeVar("_T")
_SCHEMA_LOCK_KEY = 0x6A6F6273  # "jobs": serialises schema creation across processes


def _install_hint() -> ConfigError:
    return ConfigError("PostgreSQL jobs need procrastinate: pip install 'proctor[workers]'")


def conninfo(url: str) -> str:
    """A libpq connection string (psycopg) from a SQLAlchemy PostgreSQL URL."""
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url.removeprefix(prefix)
    return url


def stall_seconds() -> float:
    """How long a worker may stay silent before its jobs are retried elsewhere."""
    raw = os.environ.get(STALL_VARIABLE, "30")
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 2:
        raise ConfigError(f"{STALL_VARIABLE}={raw!r} is not a number of seconds of at least 2")
    return value


def ensure_job_schema(url: str) -> bool:
    """Create procrastinate's tables in the database unless they exist; True if created."""
    try:
        import psycopg
        from procrastinate.schema import SchemaManager
    except ImportError as exc:
        raise _install_hint() from exc
    try:
        with psycopg.connect(conninfo(url), autocommit=True) as connection:
            connection.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK_KEY,))
            try:
                found = connection.execute(
                    "SELECT to_regclass('procrastinate_jobs') IS NOT NULL"
                ).fetchone()
                if found is not None and found[0]:
                    return False
                connection.execute(SchemaManager.get_schema().encode())
                return True
            finally:
                connection.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK_KEY,))
    except psycopg.Error as exc:
        from proctor.errors import StoreError

        raise StoreError(f"cannot create the job queue's tables: {exc}") from exc


def review_locks(run: ReviewRunRecord) -> tuple[str, str]:
    """(lock, queueing lock) of a review job: its scope, its run."""
    return f"review-scope:{run.scope_key}", f"review-run:{run.run_id}"


def analysis_locks(conversation_id: str) -> tuple[str, str]:
    """(lock, queueing lock) of an analysis job: both its conversation."""
    return f"supervise:{conversation_id}", f"supervise:{conversation_id}"


class JobQueue:
    """Defers jobs into procrastinate's tables from a synchronous process (the API)."""

    def __init__(self, url: str) -> None:
        try:
            from procrastinate import App, SyncPsycopgConnector
        except ImportError as exc:
            raise _install_hint() from exc
        self._url = url
        self._app = App(connector=SyncPsycopgConnector(conninfo=conninfo(url)))
        self._opened = False
        self._lock = threading.Lock()

    def _ready(self) -> Any:
        with self._lock:
            if not self._opened:
                ensure_job_schema(self._url)
                self._app.open()
                self._opened = True
        return self._app

    def defer(
        self, task: str, *, lock: str | None, queueing_lock: str | None, **args: Any
    ) -> int | None:
        """Queue one job; None when an equal job is already queued (coalesced)."""
        from procrastinate.exceptions import AlreadyEnqueued

        app = self._ready()
        try:
            job_id: int = app.configure_task(task, lock=lock, queueing_lock=queueing_lock).defer(
                **args
            )
        except AlreadyEnqueued:
            return None
        return job_id

    def submit_review(
        self, run: ReviewRunRecord, semantic: SemanticLayer | None, handed_by: str
    ) -> int | None:
        """Queue the execution of a run the caller claimed (its slot is handed over)."""
        lock, queueing = review_locks(run)
        return self.defer(
            REVIEW_TASK,
            lock=lock,
            queueing_lock=queueing,
            run_id=run.run_id,
            handed_by=handed_by,
            connection=connection_name(semantic),
        )

    def submit_analyses(self, conversation_ids: Sequence[str]) -> int:
        """Queue one analysis job per conversation; how many were queued (not coalesced)."""
        queued = 0
        for conversation_id in dict.fromkeys(conversation_ids):
            lock, queueing = analysis_locks(conversation_id)
            if (
                self.defer(
                    ANALYSIS_TASK,
                    lock=lock,
                    queueing_lock=queueing,
                    conversation_ids=[conversation_id],
                )
                is not None
            ):
                queued += 1
        return queued

    def submit_phrasing(self, heartbeat_id: str) -> int | None:
        """Queue a retry of one heartbeat run's suggestions."""
        key = f"phrasing:{heartbeat_id}"
        return self.defer(PHRASING_TASK, lock=key, queueing_lock=key, heartbeat_id=heartbeat_id)

    def submit_heartbeat_tick(self) -> int | None:
        """Queue a heartbeat pass now (coalesced with one already queued)."""
        return self.defer(HEARTBEAT_TASK, lock="heartbeat", queueing_lock="heartbeat", timestamp=0)

    def close(self) -> None:
        """Release the queue's connections."""
        with self._lock:
            if self._opened:
                self._app.close()
                self._opened = False


class _StoreHolder:
    """One store per worker process, opened on first use (its engine is thread-safe)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._store: SqlStore | None = None
        self._lock = threading.Lock()

    def __call__(self) -> SqlStore:
        with self._lock:
            if self._store is None:
                self._store = open_store(url=self._url)
            return self._store


def _retry_strategy() -> Any:
    from procrastinate import BaseRetryStrategy, RetryDecision

    class TransientRetry(BaseRetryStrategy):
        """Retry transient failures (see ``is_transient``) with a growing wait."""

        def get_retry_decision(self, *, exception: BaseException, job: Any) -> Any:
            if isinstance(exception, ExecutingElsewhere):  # as long as its executor lives
                return RetryDecision(retry_in={"seconds": int(min(max(stall_seconds(), 2), 30))})
            if job.attempts + 1 >= MAX_ATTEMPTS or not is_transient(exception):
                return None
            return RetryDecision(retry_in={"seconds": min(2 ** (job.attempts + 1), 60)})

    return TransientRetry()


def build_worker_app(url: str) -> Any:
    """The procrastinate app a worker process runs: every task, the periodic schedule."""
    try:
        from procrastinate import App, PsycopgConnector
    except ImportError as exc:
        raise _install_hint() from exc
    app = App(connector=PsycopgConnector(conninfo=conninfo(url)))
    store = _StoreHolder(url)
    retry = _retry_strategy()
    stalled_after = stall_seconds()

    def logged(name: str, work: Callable[[], _T]) -> _T:
        try:
            return work()
        except ExecutingElsewhere as exc:
            log.info("%s: %s", name, exc)
            raise
        except ProctorError as exc:
            log.warning("%s: %s", name, exc)
            raise

    @app.task(name=REVIEW_TASK, retry=retry, pass_context=True)
    def review(
        context: Any, run_id: str, handed_by: str | None = None, connection: str | None = None
    ) -> str:
        outcome = logged(
            REVIEW_TASK,
            lambda: run_review_job(
                store(),
                run_id,
                handed_by=handed_by,
                connection=connection,
                retried=context.job.attempts > 0,
            ),
        )
        return repr(outcome)

    @app.task(name=ANALYSIS_TASK, retry=retry)
    def supervise(conversation_ids: list[str]) -> int:
        return logged(ANALYSIS_TASK, lambda: run_analyses_job(store(), conversation_ids))

    @app.task(name=PHRASING_TASK, retry=retry)
    def phrase_suggestions(heartbeat_id: str) -> int:
        return logged(PHRASING_TASK, lambda: run_phrasing_job(store(), heartbeat_id))

    @app.periodic(cron="* * * * *", periodic_id="minute")
    @app.task(name=HEARTBEAT_TASK, lock="heartbeat", queueing_lock="heartbeat", retry=retry)
    def heartbeat_tick(timestamp: int) -> int:
        return logged(HEARTBEAT_TASK, lambda: run_heartbeat_tick(store()))

    @app.periodic(cron="* * * * * */10", periodic_id="10s")
    @app.task(name=DUE_ANALYSES_TASK, lock="supervise-due", queueing_lock="supervise-due")
    def supervise_due(timestamp: int) -> int:
        return logged(DUE_ANALYSES_TASK, lambda: run_due_analyses_job(store()))

    @app.periodic(cron="* * * * * */5", periodic_id="5s")
    @app.task(name=STALLED_TASK, queueing_lock=STALLED_TASK)
    async def retry_stalled(timestamp: int) -> int:
        stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_after)
        count = 0
        for job in stalled:
            log.warning(
                "job %s (%s) stalled: its worker stopped; retrying it", job.id, job.task_name
            )
            await app.job_manager.retry_job(job)
            count += 1
        return count

    return app


def run_worker(url: str, *, concurrency: int, name: str, once: bool = False) -> None:
    """Run a procrastinate worker in the foreground until SIGINT/SIGTERM (or idle, ``once``)."""
    ensure_job_schema(url)
    app = build_worker_app(url)
    stalled_after = stall_seconds()

    async def work() -> None:
        async with app.open_async():
            await app.run_worker_async(
                concurrency=concurrency,
                name=name,
                wait=not once,
                update_heartbeat_interval=max(1.0, stalled_after / 5),
                stalled_worker_timeout=stalled_after,
                listen_notify=True,
                fetch_job_polling_interval=1.0,
            )

    asyncio.run(work())
