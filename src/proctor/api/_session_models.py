"""Wire documents of live supervision sessions (SUP-1, SUP-2, SUP-9)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.store import SupervisionMode as Mode
from proctor.supervision import SessionStatus, Trigger


class SessionPage(WireModel):
    """Supervised targets with their state, usage this period and last analysis."""

    limit: int
    offset: int
    total: int
    """How many sessions there are."""
    sessions: list[SessionStatus]
    """The page, by target id."""
    connection: str | None
    """The connection analyses would use now (``name (provider, model)``)."""
    connection_error: str | None
    """Why analyses would fail now (a setting to fix), when they would."""


class SessionSettingsBody(BaseModel):
    """How to supervise a target (mirrors ``proctor supervise enable``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode = "general"
    """What the supervisor looks for."""
    triggers: list[Trigger] | None = Field(default=None, min_length=1, max_length=5)
    """When to analyse; default ``after_reply`` (``every_n_steps`` with ``every_n_steps``)."""
    every_n_steps: int | None = Field(default=None, ge=1, le=100_000)
    """Events between analyses, for the ``every_n_steps`` trigger."""
    throttle_seconds: float = Field(default=30.0, ge=0, le=7 * 86_400)
    """Least time between two automatic analyses of the target."""
    budget_calls: int | None = Field(default=60, ge=1, le=1_000_000)
    """Model calls per period (null: no limit)."""
    budget_tokens: int | None = Field(default=None, ge=1, le=10**12)
    """Tokens per period (null: no limit)."""
    budget_period_seconds: float = Field(default=3600.0, ge=60, le=31 * 86_400)
    """The budget period."""


class RunNowBody(BaseModel):
    """A manual analysis ("Run now", like ``proctor supervise run``)."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode | None = None
    """Mode for this run; default the session's (``general`` without a session)."""


class RunQueued(WireModel):
    """A manual analysis accepted: it runs in the background; its run shows on the session."""

    target: str
    mode: Mode
    status: Literal["queued", "already queued"]
    """``queued``, or ``already queued`` when one for the target was waiting already."""
