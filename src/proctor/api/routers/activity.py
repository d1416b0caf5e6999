"""Activity: heartbeat runs (with their reviews) and manual reviews, newest first (HB-7)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from proctor.api._deps import Limit, Offset, ReaderDep
from proctor.api._overview_models import Page
from proctor.heartbeat import ActivityEntry
from proctor.store import ActivityStatus, HeartbeatPhase, RunStatus

router = APIRouter(tags=["overview"])


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
