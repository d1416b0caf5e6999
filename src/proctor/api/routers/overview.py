"""Health, projects, search and activity."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from proctor import __version__
from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import ActivityPage, Health, ProjectList, SearchResponse

router = APIRouter(tags=["overview"])


@router.get("/health")
def health() -> Health:
    """The server answers (does not open the store)."""
    return Health(version=__version__)


@router.get("/projects")
def projects(store: StoreDep) -> ProjectList:
    """Every project with its conversation count."""
    return ProjectList(projects=store.projects())


@router.get("/search")
def search(
    store: StoreDep,
    q: Annotated[str, Query(min_length=1, max_length=2_000, description="Words or a question.")],
    project: Annotated[str | None, Query(description="Only this project (by name).")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> SearchResponse:
    """Hybrid search; full text only when the embedding model is not installed."""
    from proctor.search import search as run_search

    result = run_search(store, q, project=project, limit=limit)
    return SearchResponse(
        query=result.query, mode=result.mode, note=result.note, hits=list(result.hits)
    )


@router.get("/activity")
def activity(
    store: StoreDep,
    plan: Annotated[str | None, Query(description="Only this plan (id or name).")] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ActivityPage:
    """Heartbeat runs with their reviews, and manual reviews: newest first."""
    entries = store.activity(plan, limit=limit, offset=offset)
    return ActivityPage(limit=limit, offset=offset, activity=entries)
