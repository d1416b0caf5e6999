"""Date-aware ranking: questions about time favour turns that say when, or that happened then.

Two generic signals, read from the query's own words (nothing is keyed to particular
questions):

- a question that asks *when* ("When did …", "What year …", "How long ago …", "Since
  when …") is answered by a turn that says when: "last week", "yesterday", "in May",
  "3 years ago", "next month", a weekday or a date. Such turns gain ``SAYS_WHEN_WEIGHT``;
- a query that names a time ("in May 2023", "on 8 May 2023", "in 2022", "yesterday",
  "last week", "3 days ago") favours documents that happened in that window (their
  ``occurred_at``): they gain ``IN_WINDOW_WEIGHT``. What happened is often told in the
  days after ("I watched it last night"), so documents of the week after the window gain
  half as much. Relative expressions are read against the time of the search (``now``),
  as the person asking means them.

Both are applied to the best ``RERANK_DEPTH`` documents the fused score ranked (their
text and time are read back for it), so every ranking path — full text, hybrid in memory
or in the database — gets the same treatment, and a question without time words is
ranked exactly as before.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

SAYS_WHEN_WEIGHT = 0.25
"""Added to a document that states a time when the query asks when."""
IN_WINDOW_WEIGHT = 0.3
"""Added to a document that happened within the time window the query names."""
TOLD_AFTER = timedelta(days=7)
"""How long after a window a document may still be telling what happened in it."""
RERANK_DEPTH = 50
"""How many of the best fused documents the time signals may reorder."""

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAYS = "|".join(name.lower() for name in calendar.day_name)
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_COUNT = r"\d+|" + "|".join(sorted((re.escape(w) for w in _NUMBER_WORDS), key=len, reverse=True))

_ASKS_WHEN = re.compile(
    r"\bwhen\b|\bwhat (?:year|month|day|date|time|week|season|weekend)\b"
    r"|\bwhich (?:year|month|day|date|week|season|weekend)\b|\bhow long\b|\bsince when\b"
    r"|\bwhat period\b|\bhow many (?:years|months|weeks|days)\b",
    re.IGNORECASE,
)
_SAYS_WHEN = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|lately|ago|earlier this|later this"
    r"|the other day|(?:this )?past (?:week|weekend|month|year)"
    r"|last (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|time|"
    + _WEEKDAYS
    + r")"
    r"|next (?:week|weekend|month|year|summer|winter|spring|fall|autumn|" + _WEEKDAYS + r")"
    r"|this (?:week|weekend|month|year|summer|winter|spring|fall|autumn|morning|evening|"
    + _WEEKDAYS
    + r")"
    r"|(?:" + _COUNT + r") (?:days?|weeks?|months?|years?)"
    r"|(?:in|on|since|until|by|during) (?:" + _MONTH + r"|" + _WEEKDAYS + r")"
    r"|(?:19|20)\d\d|" + _WEEKDAYS + r")\b",
    re.IGNORECASE,
)
_DAY_MONTH_YEAR = re.compile(
    r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)? (?:of )?(?P<month>"
    + _MONTH
    + r"),? (?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_MONTH_DAY_YEAR = re.compile(
    r"\b(?P<month>" + _MONTH + r") (?P<day>\d{1,2})(?:st|nd|rd|th)?,? (?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(r"\b(?P<month>" + _MONTH + r"),? (?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>\d\d)-(?P<day>\d\d)\b")
_YEAR = re.compile(r"\b(?:in|during|of|since) (?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(?P<which>last|this|past) (?P<unit>week|weekend|month|year)\b"
    r"|\b(?P<count>" + _COUNT + r") (?P<units>days?|weeks?|months?|years?) ago\b"
    r"|\b(?P<day>yesterday|today)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[start, end)``: when something the query names happened."""

    start: datetime
    end: datetime

    def holds(self, when: datetime | None) -> bool:
        """True when ``when`` falls in the window."""
        return self.share(when) == 1.0

    def share(self, when: datetime | None) -> float:
        """1 in the window, 0.5 in the ``TOLD_AFTER`` that follows it, else 0."""
        if when is None:
            return 0.0
        moment = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
        if self.start <= moment < self.end:
            return 1.0
        return 0.5 if self.end <= moment < self.end + TOLD_AFTER else 0.0


def asks_when(query: str) -> bool:
    """True when the query asks about time ("When did …", "What year …", "How long …")."""
    return _ASKS_WHEN.search(query) is not None


def says_when(text: str) -> bool:
    """True when the text states a time: a date, a weekday, "last week", "3 years ago" …"""
    return _SAYS_WHEN.search(text) is not None


def named_window(query: str, now: datetime) -> TimeWindow | None:
    """The time the query names, as a window; relative words are read against ``now``.

    The most precise expression wins: a day, then a month, then a year, then relative
    words ("yesterday", "last week", "3 months ago"). None when the query names no time.
    """
    now = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _ISO_DATE):
        match = pattern.search(query)
        if match is not None:
            day = _date(match.group("year"), match.group("month"), match.group("day"))
            if day is not None:
                return TimeWindow(day, day + timedelta(days=1))
    match = _MONTH_YEAR.search(query)
    if match is not None:
        start = _date(match.group("year"), match.group("month"), "1")
        if start is not None:
            days = calendar.monthrange(start.year, start.month)[1]
            return TimeWindow(start, start + timedelta(days=days))
    match = _YEAR.search(query)
    if match is not None:
        year = int(match.group("year"))
        return TimeWindow(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    match = _RELATIVE.search(query)
    if match is not None:
        return _relative(match, now)
    return None


def _date(year: str, month: str, day: str) -> datetime | None:
    number = int(month) if month.isdigit() else _MONTHS.get(month.lower())
    try:
        return datetime(int(year), number or 0, int(day), tzinfo=UTC)
    except ValueError:
        return None


def _relative(match: re.Match[str], now: datetime) -> TimeWindow:
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if match.group("day") is not None:
        start = today - timedelta(days=1 if match.group("day").lower() == "yesterday" else 0)
        return TimeWindow(start, start + timedelta(days=1))
    if match.group("count") is not None:
        count = match.group("count").lower()
        number = int(count) if count.isdigit() else _NUMBER_WORDS.get(count, 1)
        span = _UNITS[match.group("units").lower().rstrip("s")]
        centre = today - timedelta(days=number * span)
        # "3 weeks ago" is loose: half a unit either side (at least a day).
        slack = timedelta(days=max(1, span // 2))
        return TimeWindow(centre - slack, centre + slack + timedelta(days=1))
    unit = match.group("unit").lower()
    span = 7 if unit in ("week", "weekend") else _UNITS[unit]
    if match.group("which").lower() == "this":
        return TimeWindow(today - timedelta(days=span), now + timedelta(seconds=1))
    # "last week" / "past month": the span before today, a little wider on the far side.
    return TimeWindow(today - timedelta(days=2 * span), now + timedelta(seconds=1))


def time_bonus(
    query_asks_when: bool, window: TimeWindow | None, text: str, when: datetime | None
) -> float:
    """What the time signals add to one document's score."""
    bonus = 0.0
    if query_asks_when and says_when(text):
        bonus += SAYS_WHEN_WEIGHT
    if window is not None:
        bonus += IN_WINDOW_WEIGHT * window.share(when)
    return bonus
