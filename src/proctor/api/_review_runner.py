"""Reviews started over HTTP run in the background, one at a time, on a thread the app owns.

A request claims the one execution slot itself (``begin_review`` / ``begin_resume``), so
the run id is known and BUSY is answered before any work starts; the runner then works
through the run (``execute_review``) on its single thread. When the app shuts down the
runner pauses the run in hand, as Ctrl-C does in the CLI: it stops after the batch it is
reading, keeps its saved batches, and can be resumed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor

from proctor.errors import ProctorError, ReviewStateError
from proctor.review import SemanticLayer, execute_review, pause_review
from proctor.store import ReviewRunRecord, SqlStore

log = logging.getLogger(__name__)


class ReviewRunner:
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
