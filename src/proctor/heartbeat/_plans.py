"""Heartbeat plans (SPEC HB-2): drafts, validation and saving.

A :class:`PlanDraft` is a plan that has not been saved: building, validating and editing
one touches nothing. Only :func:`save_plan` and :func:`save_plan_edit` write, and they
compute the next run from the plan's schedule (``_recurrence.py``). Editing starts from
the saved plan, so what is not given (``enabled``, the timezone, …) is kept.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from proctor.errors import ConfigError
from proctor.heartbeat._recurrence import WEEKDAY_NAMES, next_run_at
from proctor.store import HeartbeatPlan, PlanValues, Store

_TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_NAME = re.compile(r"^[^\x00-\x1f\x7f]+$")
MAX_WINDOW_HOURS = 24 * 366


class PlanDraft(BaseModel):
    """A plan before it is saved; invalid values are refused naming the field."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=200)
    """How the plan is called in lists and commands; unique."""
    scope: str | None = None
    """A project name; None: every project."""
    recurrence: Literal["daily", "weekly"]
    """Run every day, or on ``weekdays``."""
    time: str
    """Local wall-clock time ``HH:MM`` (24-hour) in ``timezone``."""
    weekdays: tuple[int, ...] = ()
    """Weekly plans only: 0 = Monday … 6 = Sunday (names like ``mon`` are accepted)."""
    timezone: str = Field(default_factory=lambda: local_timezone())
    """IANA zone the time is in (default: this machine's zone)."""
    enabled: bool = True
    """A disabled plan keeps its settings and is never claimed."""
    intervention: Literal["memory_only", "suggest"] = "suggest"
    """``suggest``: turn the result's changes into suggestions; ``memory_only``: just review."""
    window_hours: int | None = Field(default=None, ge=1, le=MAX_WINDOW_HOURS)
    """Review only the last N hours; None: everything new since the last review."""

    @field_validator("name", mode="before")
    @classmethod
    def _clean_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if value and not _NAME.match(value):
                raise ValueError("must not contain control characters")
        return value

    @field_validator("time", mode="before")
    @classmethod
    def _check_time(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if re.match(r"^\d:\d\d$", text):
                text = "0" + text
            if not _TIME.match(text):
                raise ValueError(f"must be HH:MM on a 24-hour clock (like 09:00), got {value!r}")
            return text
        return value

    @field_validator("weekdays", mode="before")
    @classmethod
    def _parse_weekdays(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part for part in re.split(r"[,\s]+", value) if part]
        if isinstance(value, list | tuple | set | frozenset):
            days = {_weekday(item) for item in value}
            return tuple(sorted(days))
        return value

    @field_validator("timezone", mode="before")
    @classmethod
    def _check_timezone(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            try:
                ZoneInfo(text)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"{value!r} is not an IANA timezone (like Europe/Berlin or UTC)"
                ) from None
            return text
        return value

    @field_validator("scope", mode="before")
    @classmethod
    def _clean_scope(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                raise ValueError("give a project name, or leave it out for every project")
        return value

    @model_validator(mode="after")
    def _check_weekdays(self) -> PlanDraft:
        if self.recurrence == "weekly" and not self.weekdays:
            raise ValueError("weekdays: a weekly plan needs at least one weekday (mon … sun)")
        if self.recurrence == "daily" and self.weekdays:
            raise ValueError("weekdays: a daily plan runs every day; weekdays are for weekly plans")
        return self

    @property
    def time_of_day(self) -> str:
        """``HH:MM``: the schedule's wall-clock time."""
        return self.time

    def values(self, now: datetime) -> PlanValues:
        """What the store saves: these settings and the next run after ``now``."""
        return PlanValues(
            name=self.name,
            project=self.scope,
            recurrence=self.recurrence,
            time_of_day=self.time,
            weekdays=self.weekdays,
            timezone=self.timezone,
            enabled=self.enabled,
            intervention=self.intervention,
            window_hours=self.window_hours,
            next_run_at=next_run_at(self, now),
        )


def draft_plan(**fields: Any) -> PlanDraft:
    """Build and validate a draft; invalid input raises ``ConfigError`` naming the field."""
    try:
        return PlanDraft(**fields)
    except ValidationError as exc:
        raise ConfigError(_explain(exc)) from None


def draft_from_plan(plan: HeartbeatPlan, **changes: Any) -> PlanDraft:
    """A draft of ``plan`` with ``changes``; what is not changed is kept as saved.

    Turning a weekly plan daily drops its weekdays unless new ones are given.
    """
    fields: dict[str, Any] = {
        "name": plan.name,
        "scope": plan.project_name,
        "recurrence": plan.recurrence,
        "time": plan.time_of_day,
        "weekdays": plan.weekdays,
        "timezone": plan.timezone,
        "enabled": plan.enabled,
        "intervention": plan.intervention,
        "window_hours": plan.window_hours,
    }
    if changes.get("recurrence") == "daily" and "weekdays" not in changes:
        fields["weekdays"] = ()
    fields.update(changes)
    return draft_plan(**fields)


def save_plan(store: Store, draft: PlanDraft, *, now: datetime) -> HeartbeatPlan:
    """Save a new plan; its first run is the next scheduled time after ``now``."""
    return store.create_plan(draft.values(now))


def save_plan_edit(
    store: Store, plan_ref: str, draft: PlanDraft, *, now: datetime
) -> HeartbeatPlan:
    """Save an edited plan; its next run is recomputed from ``now``."""
    return store.update_plan(plan_ref, draft.values(now))


def set_plan_enabled(store: Store, plan_ref: str, enabled: bool, *, now: datetime) -> HeartbeatPlan:
    """Enable or disable a plan; enabling schedules it from ``now`` (missed runs are not run)."""
    plan = store.plan(plan_ref)
    return save_plan_edit(store, plan.plan_id, draft_from_plan(plan, enabled=enabled), now=now)


def local_timezone() -> str:
    """This machine's IANA zone: ``$TZ``, /etc/timezone, the /etc/localtime link, else UTC."""
    candidates: list[str] = []
    if os.environ.get("TZ"):
        candidates.append(os.environ["TZ"].lstrip(":"))
    etc_timezone = Path("/etc/timezone")
    if etc_timezone.is_file():
        candidates.append(etc_timezone.read_text(encoding="utf-8").strip())
    localtime = Path("/etc/localtime")
    if localtime.is_symlink():
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    for name in candidates:
        if name in available_timezones():
            return name
    return "UTC"


def _weekday(item: Any) -> int:
    if isinstance(item, bool):
        raise ValueError(f"{item!r} is not a weekday")
    if isinstance(item, int):
        if 0 <= item <= 6:
            return item
        raise ValueError(f"weekday numbers are 0 (Monday) to 6 (Sunday), got {item}")
    if isinstance(item, str):
        key = item.strip().lower()[:3]
        if key in WEEKDAY_NAMES and item.strip().lower().startswith(key):
            return WEEKDAY_NAMES.index(key)
        if key.isdigit():
            return _weekday(int(key))
    raise ValueError(f"{item!r} is not a weekday (mon, tue, wed, thu, fri, sat, sun or 0–6)")


def _explain(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{field}: {message}" if field else message)
    return "invalid plan: " + "; ".join(problems)
