"""Health, projects, search and activity.

Search keeps its index current while the server runs: the first search (or index status
request) starts a background indexer on the app's store, every search first waits a few
seconds at most for the full text to catch up with what was stored, and every answer says
whether its hits may be incomplete (``index.stale``). The indexer stops with the server.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

import anyio.to_thread
from fastapi import APIRouter, FastAPI, Query, Request
from pydantic import BaseModel

from proctor import __version__
from proctor.api._deps import Limit, Offset, ReaderDep
from proctor.api._models import (
    Health,
    IndexerProgress,
    IndexState,
    Page,
    ProjectList,
    SearchIndexReport,
    SearchResponse,
)
from proctor.heartbeat import ActivityEntry
from proctor.store import ActivityStatus, HeartbeatPhase, RunStatus

if TYPE_CHECKING:
    from proctor.search import BackgroundIndexer

_INDEXER_LOCK = threading.Lock()


@asynccontextmanager
async def _search_indexing(app: FastAPI) -> AsyncIterator[None]:
    """While the app is served, a background indexer runs (a moment after the start when
    the app was made with ``index_search``, else from the first search; a search before
    that moment starts it at once); it stops here.

    The moment (``START_DELAY_SECONDS``) keeps the indexer's imports (the encoder's runtime,
    numpy) and its first pass from competing with the server's first requests for the one
    interpreter. An app called without its lifespan (an in-process test transport) starts
    none, so no thread outlives it: its searches read the index as it is and say so.
    """
    from proctor.api._app import START_DELAY_SECONDS

    app.state.search_indexing = True
    timer: threading.Timer | None = None
    if getattr(app.state, "search_index_at_start", False):
        delay = getattr(app.state, "search_index_delay", START_DELAY_SECONDS)
        timer = threading.Timer(delay, search_indexer, args=(app,))
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
        with _INDEXER_LOCK:
            app.state.search_indexing = False
            indexer: BackgroundIndexer | None = getattr(app.state, "search_indexer", None)
        if indexer is not None:
            await anyio.to_thread.run_sync(indexer.stop)


router = APIRouter(tags=["overview"], lifespan=_search_indexing)


def search_indexer(app: FastAPI) -> BackgroundIndexer | None:
    """The app's background indexer, started on first use; None when the app is not served."""
    with _INDEXER_LOCK:
        if not getattr(app.state, "search_indexing", False):
            return None
        indexer: BackgroundIndexer | None = getattr(app.state, "search_indexer", None)
        if indexer is None:
            from proctor.search import BackgroundIndexer  # imported by the first use

            indexer = BackgroundIndexer(app.state.store_holder.get).start()
            app.state.search_indexer = indexer
        return indexer


class ActivityLine(BaseModel):
    """One line of activity: a heartbeat run (with its review) or a manual review (HB-7)."""

    kind: Literal["heartbeat", "manual"]
    activity_id: str
    """The heartbeat id, or the review run id of a manual review."""
    plan_id: str | None
    plan_name: str | None
    status: ActivityStatus
    phase: HeartbeatPhase | None
    scope: str
    """The project name, or ``all``."""
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    summary: str | None
    """The published result's summary."""
    result_id: str | None
    review_run_id: str | None
    review_status: RunStatus | None
    model_calls: int
    suggestions: int | None
    outcome: str
    """What happened in words, as ``proctor activity`` says it (``updated``, ``no change
    (no model call)``, ``failed`` …)."""

    @classmethod
    def of(cls, entry: ActivityEntry) -> ActivityLine:
        """The wire form of a stored activity entry."""
        return cls(**asdict(entry), outcome=entry.outcome)


class ActivityPage(Page):
    """Heartbeat runs and manual reviews, newest first."""

    activity: list[ActivityLine]
    """The page."""


@router.get("/health")
def health() -> Health:
    """The server answers (does not open the store)."""
    return Health(version=__version__)


@router.get("/projects")
def projects(store: ReaderDep) -> ProjectList:
    """Every project with its conversation count."""
    return ProjectList(projects=store.projects())


@router.get("/search")
def search(
    request: Request,
    store: ReaderDep,
    q: Annotated[str, Query(min_length=1, max_length=2_000, description="Words or a question.")],
    project: Annotated[str | None, Query(description="Only this project (by name).")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> SearchResponse:
    """Hybrid search; full text only when the embedding model is not installed.

    Messages stored up to the request are searchable (the full text catches up first, for
    at most a few seconds); documents not embedded yet rank by full text only. ``index``
    says when the hits may be incomplete.
    """
    from proctor.search import CATCH_UP_SECONDS, hold_vectors
    from proctor.search import search as run_search

    indexer = search_indexer(request.app)
    if indexer is not None:
        # A served app runs as long as its indexer: its searches rank from an in-memory
        # copy of the index (read once, then kept current; ``proctor.search._catalog``),
        # as they did before GET routes read through the read-only view, not from the
        # vectors in the database on every request.
        hold_vectors(store)
        indexer.catch_up(CATCH_UP_SECONDS)
    result = run_search(store, q, project=project, limit=limit)
    status = result.index if indexer is None else indexer.annotate(result.index)
    return SearchResponse(
        query=result.query,
        mode=result.mode,
        note=result.note,
        index=IndexState.of(status),
        hits=list(result.hits),
    )


@router.get("/search/index")
def search_index(request: Request, store: ReaderDep) -> SearchIndexReport:
    """The search index (documents, how many embedded, whether stale) and the background
    indexer's progress; starts the indexer when it is not running yet."""
    from proctor.search import index_status

    indexer = search_indexer(request.app)
    status = index_status(store)
    if indexer is None:
        return SearchIndexReport(index=IndexState.of(status), indexer=None)
    return SearchIndexReport(
        index=IndexState.of(indexer.annotate(status)), indexer=IndexerProgress.of(indexer.state)
    )


@router.get("/activity")
def activity(
    store: ReaderDep,
    plan: Annotated[str | None, Query(description="Only this plan (id or name).")] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ActivityPage:
    """Heartbeat runs with their reviews, and manual reviews: newest first."""
    entries = store.activity(plan, limit=limit, offset=offset)
    return ActivityPage(limit=limit, offset=offset, activity=[ActivityLine.of(e) for e in entries])
