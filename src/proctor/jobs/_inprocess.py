"""The embedded default (SQLite, STO-1): jobs run in this process.

Reviews started over HTTP run on one background thread the app owns (one slot, one
worker). Analyses that live intake calls for run on the app's ``AnalysisQueue``, in the
background, so no intake request waits for a model. Analyses asked for by the CLI,
phrasing retries and heartbeat passes are direct calls that return when the work is done.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor

from proctor.errors import ProctorError, ReviewStateError
from proctor.jobs._work import (
    run_analyses_job,
    run_heartbeat_tick,
    run_phrasing_job,
)
from proctor.review import SemanticLayer, execute_review, pause_review
from proctor.store import ReviewRunRecord, SqlStore

log = logging.getLogger("proctor.jobs")


class ReviewThread:
    """Executes claimed review runs on one background thread (one slot, one worker)."""

    def __init__(self, executor: Executor | None = None) -> None:
        self._executor = executor or ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="proctor-review"
        )
        self._lock = threading.Lock()
        self._run_id: str | None = None
        self._future: Future[None] | None = None
        self._stopped = False

    def submit(self, store: SqlStore, run: ReviewRunRecord, semantic: SemanticLayer | None) -> None:
        """Work through ``run`` (already holding the slot) in the background."""
        with self._lock:
            if self._stopped:
                store.set_review_status(run.run_id, "paused", allowed_from=("running",))
                store.release_review_slot(run.run_id)
                raise ReviewStateError(
                    f"the server is shutting down; review run {run.run_id[:8]} was paused "
                    "before it started; resume it when the server is back"
                )
            self._run_id = run.run_id
            self._future = self._executor.submit(self._execute, store, run, semantic)

    def current(self) -> str | None:
        """The run this process is executing (or about to), if any."""
        with self._lock:
            if self._future is None or self._future.done():
                return None
            return self._run_id

    def wait(self, timeout: float | None = None) -> None:
        """Block until the run in hand has stopped (for shutdown and tests)."""
        with self._lock:
            future = self._future
        if future is not None:
            future.result(timeout=timeout)

    def stop(self, store: SqlStore) -> None:
        """Pause the run in hand, wait for the worker to stop, and accept no more runs."""
        with self._lock:
            self._stopped = True
        running = self.current()
        if running is not None:
            # It may have finished, or a person cancelled it, meanwhile.
            with contextlib.suppress(ProctorError):
                pause_review(store, running)
        self.wait()
        self._executor.shutdown(wait=True)

    @staticmethod
    def _execute(store: SqlStore, run: ReviewRunRecord, semantic: SemanticLayer | None) -> None:
        try:
            execute_review(store, run, semantic)
        except ProctorError as exc:
            # execute_review recorded it on the run (status failed, with the sentence).
            log.warning("review run %s failed: %s", run.run_id[:8], exc)
        except Exception:
            log.exception("review run %s stopped on an unexpected error", run.run_id[:8])
            with contextlib.suppress(ProctorError):
                store.set_review_status(
                    run.run_id,
                    "failed",
                    allowed_from=("running",),
                    error="the review stopped on an internal error; resume it to retry",
                    finished=True,
                )


class InProcessJobs:
    """The job interface on the embedded store: everything runs here and now."""

    def __init__(self, store: SqlStore, reviews: ReviewThread | None = None) -> None:
        self.store = store
        self.reviews = reviews or ReviewThread()

    def submit_review(
        self, run: ReviewRunRecord, semantic: SemanticLayer | None, handed_by: str
    ) -> None:
        """Execute a claimed run on this process's review thread."""
        self.reviews.submit(self.store, run, semantic)

    def submit_analyses(self, conversation_ids: Sequence[str]) -> int:
        """Run the analyses the conversations' new events call for; how many ran."""
        return run_analyses_job(self.store, conversation_ids)

    def submit_phrasing(self, heartbeat_id: str) -> int:
        """Retry one heartbeat run's suggestions now; how many are open."""
        return run_phrasing_job(self.store, heartbeat_id)

    def submit_heartbeat_tick(self) -> int:
        """Run one heartbeat pass now; how many plans ran."""
        return run_heartbeat_tick(self.store)


AnalysisWork = Callable[[SqlStore, Sequence[str]], object]
"""What an analysis job does with its conversations (``run_analyses_job``)."""


class AnalysisQueue:
    """Analyses of conversations with new events, run in the background of this process.

    The in-process counterpart of the ``proctor.supervise`` job on PostgreSQL: one job per
    conversation at a time; any number of requests while its job waits coalesce into it,
    and a request while it runs queues one more run after it (which reads the
    conversation as it is then). Different conversations are analysed at once, up to
    ``workers``. Throttle, budget and single flight per target stay in the store's
    claiming transaction (SUP-2), as on workers.
    """

    def __init__(
        self, store: SqlStore, *, workers: int = 4, work: AnalysisWork = run_analyses_job
    ) -> None:
        self.store = store
        self._work = work
        self._executor = ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="proctor-analyses"
        )
        self._changed = threading.Condition()
        self._waiting: set[str] = set()
        self._running: set[str] = set()
        self._stopped = False

    def submit(self, conversation_ids: Sequence[str]) -> int:
        """Queue an analysis job per conversation; how many were queued (not coalesced).

        Returns at once; after ``stop`` nothing is queued (the events stay stored, and
        the next analysis of their target covers them).
        """
        queued = 0
        with self._changed:
            if self._stopped:
                return 0
            for conversation_id in dict.fromkeys(conversation_ids):
                if conversation_id in self._waiting:
                    continue
                self._waiting.add(conversation_id)
                queued += 1
                if conversation_id not in self._running:
                    self._executor.submit(self._run, conversation_id)
        return queued

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job waits or runs (shutdown, tests); False when ``timeout`` passed."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._waiting and not self._running, timeout=timeout
            )

    def stop(self) -> None:
        """Queue no more jobs, drop those not started, and wait for the running ones."""
        with self._changed:
            self._stopped = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._changed:
            self._waiting.clear()
            self._changed.notify_all()

    def _run(self, conversation_id: str) -> None:
        with self._changed:
            self._waiting.discard(conversation_id)
            self._running.add(conversation_id)
        try:
            self._work(self.store, [conversation_id])
        except ProctorError as exc:
            log.warning("analysis of %s failed: %s", conversation_id, exc)
        except Exception:
            log.exception("analysis of %s stopped on an unexpected error", conversation_id)
        finally:
            with self._changed:
                self._running.discard(conversation_id)
                if conversation_id in self._waiting and not self._stopped:
                    self._executor.submit(self._run, conversation_id)
                self._changed.notify_all()
