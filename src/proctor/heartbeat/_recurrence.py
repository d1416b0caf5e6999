"""When a plan runs next (SPEC HB-2): daily or weekly at a wall-clock time in an IANA zone.

The time of day is a local wall-clock time, so a 09:00 plan stays at 09:00 across daylight
saving changes. Two local times need a rule:

- a time that does not exist (spring forward, e.g. 02:30 in Berlin on the last Sunday of
  March) runs at the first valid instant after the gap: the moment the clocks jump;
- a time that happens twice (fall back) runs once, at its first occurrence.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, Protocol
from zoneinfo import ZoneInfo

Recurrence = Literal["daily", "weekly"]

WEEKDAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Weekday numbers as stored: 0 = Monday … 6 = Sunday (``date.weekday()``)."""


class Schedule(Protocol):
    """What the next run depends on; plans and drafts both have it."""

    @property
    def recurrence(self) -> Recurrence: ...

    @property
    def time_of_day(self) -> str: ...

    @property
    def weekdays(self) -> tuple[int, ...]: ...

    @property
    def timezone(self) -> str: ...


def next_run_at(plan: Schedule, after: datetime) -> datetime:
    """The first instant strictly after ``after`` at which ``plan`` runs, in UTC."""
    if after.tzinfo is None:
        raise ValueError("next_run_at needs a timezone-aware time")
    zone = ZoneInfo(plan.timezone)
    hour, minute = (int(part) for part in plan.time_of_day.split(":"))
    wall = time(hour, minute)
    start = after.astimezone(zone).date() - timedelta(days=1)
    for offset in range(9):  # a weekly plan with one weekday recurs within 8 local days
        day = start + timedelta(days=offset)
        if plan.recurrence == "weekly" and day.weekday() not in plan.weekdays:
            continue
        instant = local_instant(day, wall, zone)
        if instant > after:
            return instant
    raise ValueError(f"plan has no weekday to run on: {plan.weekdays!r}")


def local_instant(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """The UTC instant of a local wall-clock time, with the DST rules of this module."""
    naive = datetime.combine(day, wall)
    first = naive.replace(tzinfo=zone, fold=0)
    utc = first.astimezone(UTC)
    if utc.astimezone(zone).replace(tzinfo=None) == naive:
        return utc  # exists; fold=0 is the first of two occurrences when ambiguous
    return _end_of_gap(naive, zone)


def _end_of_gap(naive: datetime, zone: ZoneInfo) -> datetime:
    """The instant the clocks jumped over ``naive`` (a time that does not exist locally)."""
    # fold=1 reads the time with the offset after the change, fold=0 with the one before:
    # the jump lies between the two readings. Search it to the second.
    low = naive.replace(tzinfo=zone, fold=1).astimezone(UTC)
    high = naive.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if low > high:
        low, high = high, low
    after_offset = high.astimezone(zone).utcoffset()
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        if middle.astimezone(zone).utcoffset() == after_offset:
            high = middle
        else:
            low = middle
    return high.replace(microsecond=0)


def describe_schedule(plan: Schedule) -> str:
    """``daily 09:00`` or ``weekly mon,thu 09:00``, for lists."""
    if plan.recurrence == "daily":
        return f"daily {plan.time_of_day}"
    days = ",".join(WEEKDAY_NAMES[d] for d in sorted(plan.weekdays))
    return f"weekly {days} {plan.time_of_day}"
