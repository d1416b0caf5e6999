"""Wire documents of review runs: the run as a person sees it, requests, the slot's state."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.review import DEFAULT_BATCH_SIZE
from proctor.store import ReviewRunRecord, RunStatus, ShownStatus, Trigger

Phase = Literal["reading", "publishing", "pausing", "cancelling", "stopped"]
"""Where an active run is: reading batches, merging and publishing, or stopping."""


def phase_of(run: ReviewRunRecord) -> Phase:
    """The phase a run is in now (``stopped`` once no worker executes it)."""
    shown = run.shown
    if shown in ("pausing", "cancelling"):
        return shown
    if run.status != "running" or not run.active:
        return "stopped"
    return "publishing" if run.batches_done >= run.batches_total else "reading"


class ReviewRunView(WireModel):
    """One review run as stored, with the state a person sees and its phase."""

    run_id: str
    scope_key: str
    """``all`` or ``project:<id>``."""
    project_id: str | None
    time_from: datetime | None
    time_to: datetime | None
    trigger: Trigger
    """``manual``, ``scheduled`` or ``heartbeat``."""
    reanalyze: bool
    status: RunStatus
    """``running``, ``paused``, ``cancelled``, ``completed``, ``failed`` or ``no_change``."""
    active: bool
    """A worker still executes it (a paused or cancelled run that is still stopping)."""
    shown: ShownStatus
    """The status a person sees: ``cancelling`` / ``pausing`` while the worker stops."""
    phase: Phase
    connection: str | None
    model: str | None
    options: dict[str, Any]
    sources_total: int
    sources_done: int
    batches_total: int
    batches_done: int
    model_calls: int
    input_tokens: int
    output_tokens: int
    error: str | None
    result_id: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None

    @classmethod
    def of(cls, run: ReviewRunRecord) -> ReviewRunView:
        """The view of a stored run."""
        return cls(**asdict(run), shown=run.shown, phase=phase_of(run))


class ReviewPage(WireModel):
    """A page of review runs, newest first."""

    limit: int
    offset: int
    reviews: list[ReviewRunView]
    """The page."""


class ReviewStart(BaseModel):
    """What to review (mirrors ``proctor review run``)."""

    model_config = ConfigDict(extra="forbid")

    project: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="Review one project by name (default: every project). Alias: scope.",
    )
    scope: str | None = Field(
        default=None, min_length=1, max_length=500, description="Same as project."
    )
    since: datetime | None = None
    """Only sources from this time on (ISO 8601; without a zone: UTC)."""
    until: datetime | None = None
    """Only sources before this time."""
    reanalyze: bool = False
    """Re-read the whole range, ignoring checkpoints (neither read nor moved)."""
    use_model: bool = True
    """Use the model connection for the semantic layer when one is configured."""
    connection: str | None = Field(default=None, min_length=1, max_length=80)
    """A model connection by name (default: the default connection)."""
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=5, le=500)
    """At most this many sources per batch (one model call each)."""


class ReviewResume(BaseModel):
    """How to continue a paused or failed run."""

    model_config = ConfigDict(extra="forbid")

    connection: str | None = Field(default=None, min_length=1, max_length=80)
    """A model connection by name (default: the default connection)."""


class ReviewExecution(WireModel):
    """Who holds the one review slot and how far its run is."""

    slot_holder: str | None
    """The run holding the slot (in any process), None when it is free."""
    in_this_server: bool
    """The holder is executed by this server's background worker."""
    run: ReviewRunView | None
    """The holding run (phase, batches, sources read), or the newest one still stopping."""
