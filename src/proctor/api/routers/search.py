"""Search: ranked hits, and the state of the index and of the server's indexer.

Every search first waits a few seconds at most for the full text to catch up with what was
stored, and every answer says whether its hits may be incomplete (``index.stale``). The
background indexer is the overview router's (``search_indexer``), started by the first
search or index status request when the server has not started it yet.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from proctor.api._deps import ReaderDep
from proctor.api._search_models import (
    IndexerProgress,
    IndexState,
    SearchIndexReport,
    SearchResponse,
)
from proctor.api.routers.overview import search_indexer

router = APIRouter(tags=["overview"])


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
