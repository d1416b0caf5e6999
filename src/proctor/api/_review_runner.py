"""Reviews started over HTTP run in the background: on a thread here, or on workers.

A request claims the execution slot itself (``begin_review`` / ``begin_resume``), so the
run id is known and BUSY is answered before any work starts. Then:

* on the embedded SQLite store the runner works through the run (``execute_review``) on
  its single thread; when the app shuts down it pauses the run in hand, as Ctrl-C does in
  the CLI: it stops after the batch it is reading, keeps its saved batches, and can be
  resumed;
* on PostgreSQL it queues a ``proctor.review`` job (``proctor.jobs``) and hands the slot
  over: a ``proctor worker`` process takes it over and executes the run. Until a worker
  does, this server holds the slot for the run, so the scope reads as busy.
"""

from __future__ import annotations

from proctor.jobs import ReviewThread, queue_for, uses_queue
from proctor.review import SemanticLayer
from proctor.store import ReviewRunRecord, SqlStore, slot_owner


class ReviewRunner(ReviewThread):
    """Executes claimed review runs on one background thread, or queues them for workers."""

    def submit(self, store: SqlStore, run: ReviewRunRecord, semantic: SemanticLayer | None) -> None:
        """Work through ``run`` (already holding the slot) in the background."""
        if uses_queue(store):
            queue_for(store).submit_review(run, semantic, handed_by=slot_owner())
            return
        super().submit(store, run, semantic)
