"""Health and projects, and the search indexer's life beside the server's.

Search keeps its index current while the server runs: the first search (or index status
request, ``routers/search.py``) starts a background indexer on the app's store, or the
server starts it a moment after its own start (``index_search``). The indexer stops with
the server. This router is the one the app imports while it is built (its lifespan runs
the indexer); the search and activity routes, which follow it, are imported on first use.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio.to_thread
from fastapi import APIRouter, FastAPI

from proctor import __version__
from proctor.api._deps import ReaderDep
from proctor.api._overview_models import Health, ProjectList

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


@router.get("/health")
def health() -> Health:
    """The server answers (does not open the store)."""
    return Health(version=__version__)


@router.get("/projects")
def projects(store: ReaderDep) -> ProjectList:
    """Every project with its conversation count."""
    return ProjectList(projects=store.projects())
