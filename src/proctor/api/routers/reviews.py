"""Review runs: list and show."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import ReviewPage
from proctor.store import ReviewRunRecord

router = APIRouter(prefix="/reviews", tags=["reviews"])


@router.get("")
def list_reviews(
    store: StoreDep,
    status: Annotated[str | None, Query(description="Only runs in this status.")] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ReviewPage:
    """Review runs, newest first."""
    runs = store.review_runs(limit=limit + offset, status=status)[offset:]
    return ReviewPage(limit=limit, offset=offset, reviews=runs)


@router.get("/{run_id}")
def show_review(store: StoreDep, run_id: str) -> ReviewRunRecord:
    """One review run."""
    return store.review_run(run_id)
