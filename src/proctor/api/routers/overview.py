"""Health, projects, search and activity."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from proctor import __version__
from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import Health, Page, ProjectList, SearchResponse
from proctor.heartbeat import ActivityEntry

router = APIRouter(tags=["overview"])


class ActivityLine(BaseModel):
    """One line of activity: a heartbeat run (with its review) or a manual review (HB-7)."""

    kind: Literal["heartbeat", "manual"]
    activity_id: str
    """The heartbeat id, or the review run id of a manual review."""
    plan_id: str | None
    plan_name: str | None
    status: str
    phase: str | None
    scope: str
    """The project name, or ``all``."""
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    summary: str | None
    """The published result's summary."""
    result_id: str | None
    review_run_id: str | None
    review_status: str | None
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
    return ActivityPage(limit=limit, offset=offset, activity=[ActivityLine.of(e) for e in entries])
