"""What every route receives: the app's store, the review runner and validated pagination.

The review runner (and with it the job queue and the review pipeline) is imported when a
route first needs it, not when the app is built: ``proctor serve`` answers sooner.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, FastAPI, Query, Request

from proctor.store import ReadStore, SqlStore

if TYPE_CHECKING:
    from proctor.api._review_runner import ReviewRunner

_RUNNER_LOCK = threading.Lock()


def _store(request: Request) -> SqlStore:
    holder = request.app.state.store_holder
    store: SqlStore = holder.get()
    return store


def _reader(request: Request) -> ReadStore:
    reader: ReadStore = request.app.state.store_holder.reader()
    return reader


def review_runner(app: FastAPI) -> ReviewRunner:
    """The app's review runner, made on first use (one per app)."""
    with _RUNNER_LOCK:
        runner: ReviewRunner | None = getattr(app.state, "review_runner", None)
        if runner is None:
            from proctor.api._review_runner import ReviewRunner

            runner = ReviewRunner()
            app.state.review_runner = runner
        return runner


def stop_review_runner(app: FastAPI) -> None:
    """Pause the review the app is executing and stop its worker (app shutdown)."""
    runner: ReviewRunner | None = getattr(app.state, "review_runner", None)
    if runner is not None:
        runner.stop(app.state.store_holder.get())


def _runner(request: Request) -> ReviewRunner:
    return review_runner(request.app)


StoreDep = Annotated[SqlStore, Depends(_store)]
"""The store the app opened once (routes that write: POST, PUT, PATCH, DELETE)."""

ReaderDep = Annotated[ReadStore, Depends(_reader)]
"""The same store read-only: the GET routes' (no write methods; the database refuses writes)."""

RunnerDep = Annotated["ReviewRunner", Depends(_runner)]
"""The app's background review runner."""

Limit = Annotated[int, Query(ge=1, le=100, description="How many items (1–100).")]
"""A page size."""

Offset = Annotated[int, Query(ge=0, le=1_000_000, description="How many items to skip.")]
"""Where a page starts."""
