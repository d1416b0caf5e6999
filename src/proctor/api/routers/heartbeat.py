"""The heartbeat loop this server hosts: is it on, when did it last pass, what did it run."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request

from proctor.api._base_models import WireModel
from proctor.api._deps import ReaderDep
from proctor.api._heartbeat import HeartbeatLoop
from proctor.heartbeat import app_enabled

router = APIRouter(prefix="/heartbeat", tags=["heartbeat"])


class HeartbeatStatus(WireModel):
    """Whether this server runs due plans, and what its loop did since it started."""

    app_enabled: bool
    """The supervisor app switch: off means no plan runs, loop or not."""
    hosted: bool
    """This server runs due plans itself (``proctor serve`` without ``--no-heartbeat``)."""
    interval_seconds: float | None
    """Seconds between passes, when hosted."""
    owner: str | None
    """The lease owner this server claims plans as (``host:pid``), when hosted."""
    ticks: int
    """Passes made since the server started."""
    plans_run: int
    """Plans run since the server started."""
    passing: bool
    """A pass is under way now."""
    last_tick_at: datetime | None
    """When the last pass ended."""
    last_error: str | None
    """The last pass's error, if it failed."""


@router.get("")
def heartbeat_status(store: ReaderDep, request: Request) -> HeartbeatStatus:
    """The app switch and the hosted heartbeat loop's state."""
    loop: HeartbeatLoop | None = request.app.state.heartbeat
    enabled = app_enabled(store)
    if loop is None:
        return HeartbeatStatus(
            app_enabled=enabled, hosted=False, interval_seconds=None, owner=None, ticks=0,
            plans_run=0, passing=False, last_tick_at=None, last_error=None,
        )  # fmt: skip
    state = loop.state
    return HeartbeatStatus(
        app_enabled=enabled,
        hosted=True,
        interval_seconds=state.interval,
        owner=state.owner,
        ticks=state.ticks,
        plans_run=state.plans_run,
        passing=state.passing,
        last_tick_at=state.last_tick_at,
        last_error=state.last_error,
    )
