"""Next-run times across daylight saving changes and time zones (SPEC HB-2)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from proctor.heartbeat import describe_schedule, next_run_at


@dataclass(frozen=True)
class Schedule:
    recurrence: str
    time_of_day: str
    weekdays: tuple[int, ...]
    timezone: str


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def _daily(time: str, zone: str) -> Schedule:
    return Schedule("daily", time, (), zone)


@pytest.mark.parametrize(
    ("zone", "time", "after", "expected"),
    [
        # Europe/Berlin: +01:00 in winter, +02:00 from 2026-03-29 01:00 UTC to 2026-10-25 01:00 UTC.
        ("Europe/Berlin", "09:00", _utc(2026, 1, 10, 12), _utc(2026, 1, 11, 8)),
        ("Europe/Berlin", "09:00", _utc(2026, 3, 28, 12), _utc(2026, 3, 29, 7)),
        ("Europe/Berlin", "09:00", _utc(2026, 10, 24, 12), _utc(2026, 10, 25, 8)),
        # 02:30 does not exist on 2026-03-29: the run is at the jump, 03:00 CEST.
        ("Europe/Berlin", "02:30", _utc(2026, 3, 28, 12), _utc(2026, 3, 29, 1)),
        ("Europe/Berlin", "02:30", _utc(2026, 3, 29, 1), _utc(2026, 3, 30, 0, 30)),
        # 02:30 happens twice on 2026-10-25: once, at the first (CEST) occurrence …
        ("Europe/Berlin", "02:30", _utc(2026, 10, 24, 12), _utc(2026, 10, 25, 0, 30)),
        # … and not again an hour later (CET): the next run is the day after.
        ("Europe/Berlin", "02:30", _utc(2026, 10, 25, 0, 30), _utc(2026, 10, 26, 1, 30)),
        # America/New_York: EST -05:00, EDT -04:00 from 2026-03-08 07:00 UTC to 2026-11-01 06:00 UTC.
        ("America/New_York", "09:00", _utc(2026, 3, 7, 15), _utc(2026, 3, 8, 13)),
        ("America/New_York", "09:00", _utc(2026, 10, 31, 14), _utc(2026, 11, 1, 14)),
        ("America/New_York", "02:15", _utc(2026, 3, 7, 12), _utc(2026, 3, 8, 7)),
        ("America/New_York", "01:30", _utc(2026, 10, 31, 12), _utc(2026, 11, 1, 5, 30)),
        ("America/New_York", "01:30", _utc(2026, 11, 1, 5, 30), _utc(2026, 11, 2, 6, 30)),
        # Australia/Sydney (southern hemisphere): DST ends 2026-04-05, starts 2026-10-04.
        ("Australia/Sydney", "02:30", _utc(2026, 4, 4, 0), _utc(2026, 4, 4, 15, 30)),
        ("Australia/Sydney", "02:30", _utc(2026, 4, 4, 15, 30), _utc(2026, 4, 5, 16, 30)),
        ("Australia/Sydney", "02:30", _utc(2026, 10, 3, 0), _utc(2026, 10, 3, 16)),
        # A zone without daylight saving, and UTC itself.
        ("Asia/Kolkata", "09:00", _utc(2026, 3, 29, 0), _utc(2026, 3, 29, 3, 30)),
        ("UTC", "00:00", _utc(2026, 12, 31, 23, 59), _utc(2027, 1, 1, 0, 0)),
    ],
)
def test_a_daily_plan_runs_at_its_local_time_across_dst(
    zone: str, time: str, after: datetime, expected: datetime
) -> None:
    assert next_run_at(_daily(time, zone), after) == expected


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (_utc(2026, 11, 20, 7, 59), _utc(2026, 11, 20, 8)),  # created just before 09:00
        (_utc(2026, 11, 20, 8), _utc(2026, 11, 21, 8)),  # exactly at 09:00: not again today
        (_utc(2026, 11, 20, 8, 1), _utc(2026, 11, 21, 8)),  # just after
    ],
)
def test_a_plan_created_just_before_or_after_its_time_runs_today_or_tomorrow(
    after: datetime, expected: datetime
) -> None:
    assert next_run_at(_daily("09:00", "Europe/Berlin"), after) == expected


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        # Monday and Thursday at 09:00 Berlin. 2026-03-23 is a Monday.
        (_utc(2026, 3, 23, 7, 59), _utc(2026, 3, 23, 8)),
        (_utc(2026, 3, 23, 8), _utc(2026, 3, 26, 8)),
        # Thursday's run done: next Monday, which is after the spring change (CEST).
        (_utc(2026, 3, 26, 8), _utc(2026, 3, 30, 7)),
        (_utc(2026, 3, 27, 0), _utc(2026, 3, 30, 7)),
    ],
)
def test_a_weekly_plan_runs_on_its_weekdays_only(after: datetime, expected: datetime) -> None:
    plan = Schedule("weekly", "09:00", (0, 3), "Europe/Berlin")
    assert next_run_at(plan, after) == expected


def test_a_weekly_plan_on_one_day_waits_a_full_week() -> None:
    plan = Schedule("weekly", "18:00", (6,), "America/New_York")
    sunday_run = _utc(2026, 11, 1, 23)  # Sunday 18:00 EST
    assert next_run_at(plan, sunday_run) == _utc(2026, 11, 8, 23)


def test_a_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        next_run_at(_daily("09:00", "UTC"), datetime(2026, 1, 1))


def test_schedules_are_described_for_lists() -> None:
    assert describe_schedule(_daily("09:00", "UTC")) == "daily 09:00"
    weekly = Schedule("weekly", "09:00", (3, 0), "UTC")
    assert describe_schedule(weekly) == "weekly mon,thu 09:00"
