"""Plan drafts: validation with clear errors, no side effect until saved, edits (SPEC HB-2)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from proctor.errors import ConfigError, NotFoundError
from proctor.heartbeat import (
    PlanDraft,
    draft_from_plan,
    draft_plan,
    save_plan,
    save_plan_edit,
    set_plan_enabled,
)
from proctor.store import SqlStore
from tests.heartbeat.conftest import START


def _draft(**changes: object) -> PlanDraft:
    fields: dict[str, object] = {
        "name": "morning",
        "recurrence": "daily",
        "time": "09:00",
        "timezone": "Europe/Berlin",
    }
    fields.update(changes)
    return draft_plan(**fields)


def test_a_draft_has_defaults_and_accepts_weekday_names_and_numbers() -> None:
    draft = _draft(recurrence="weekly", weekdays="thu, Monday", time="9:05")

    assert draft.weekdays == (0, 3)
    assert draft.time == "09:05"
    assert (draft.enabled, draft.intervention, draft.window_hours, draft.scope) == (
        True,
        "suggest",
        None,
        None,
    )
    assert _draft(recurrence="weekly", weekdays=[6, "sat"]).weekdays == (5, 6)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"time": "25:00"}, "time: must be HH:MM"),
        ({"time": "9am"}, "time: must be HH:MM"),
        ({"timezone": "Mars/Olympus"}, "timezone: 'Mars/Olympus' is not an IANA timezone"),
        ({"recurrence": "monthly"}, "recurrence:"),
        ({"recurrence": "weekly"}, "weekdays: a weekly plan needs at least one weekday"),
        ({"weekdays": [1]}, "weekdays: a daily plan runs every day"),
        ({"recurrence": "weekly", "weekdays": ["funday"]}, "weekdays: 'funday' is not a weekday"),
        ({"recurrence": "weekly", "weekdays": [7]}, "weekdays: weekday numbers are 0"),
        ({"intervention": "pause"}, "intervention:"),
        ({"window_hours": 0}, "window_hours:"),
        ({"window_hours": "24"}, "window_hours:"),
        ({"name": ""}, "name:"),
        ({"name": "bad\nname"}, "name: must not contain control characters"),
        ({"scope": " "}, "scope: give a project name"),
        ({"colour": "red"}, "colour:"),
    ],
)
def test_an_invalid_draft_is_refused_naming_the_field(
    changes: dict[str, object], field: str
) -> None:
    with pytest.raises(ConfigError, match="invalid plan") as raised:
        _draft(**changes)
    assert field in str(raised.value)


def test_a_draft_has_no_side_effect_until_saved(examples_store: SqlStore) -> None:
    draft = _draft(scope="nowhere")
    _draft()
    assert examples_store.plans() == []

    plan = save_plan(examples_store, _draft(), now=START)

    assert [p.name for p in examples_store.plans()] == ["morning"]
    assert plan.next_run_at == datetime(2026, 11, 20, 8, 0, tzinfo=UTC)  # 09:00 Berlin today
    with pytest.raises(ConfigError, match="exists"):
        save_plan(examples_store, _draft(), now=START)
    assert draft.scope == "nowhere"


def test_editing_keeps_enabled_and_timezone_unless_given(examples_store: SqlStore) -> None:
    save_plan(examples_store, _draft(enabled=False, timezone="America/New_York"), now=START)
    plan = examples_store.plan("morning")

    edited = save_plan_edit(
        examples_store, "morning", draft_from_plan(plan, time="10:30"), now=START
    )

    assert (edited.enabled, edited.timezone, edited.time_of_day) == (
        False,
        "America/New_York",
        "10:30",
    )
    assert edited.next_run_at == datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


def test_a_weekly_plan_turned_daily_drops_its_weekdays(examples_store: SqlStore) -> None:
    plan = save_plan(examples_store, _draft(recurrence="weekly", weekdays="mon"), now=START)

    daily = draft_from_plan(plan, recurrence="daily")

    assert daily.weekdays == ()


def test_enabling_a_plan_schedules_it_from_now_without_running_missed_times(
    examples_store: SqlStore,
) -> None:
    save_plan(examples_store, _draft(enabled=False), now=START)
    later = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)

    plan = set_plan_enabled(examples_store, "morning", True, now=later)

    assert plan.enabled
    assert plan.next_run_at == datetime(2026, 11, 26, 8, 0, tzinfo=UTC)


def test_a_plan_scope_must_name_a_known_project(examples_store: SqlStore) -> None:
    project = examples_store.projects()[0].name

    plan = save_plan(examples_store, _draft(scope=project), now=START)

    assert plan.scope == project and plan.scope_key.startswith("project:")
    with pytest.raises(NotFoundError, match="no project 'nowhere'"):
        save_plan(examples_store, _draft(name="other", scope="nowhere"), now=START)
