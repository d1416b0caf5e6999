"""The import's fast SQLite time bind writes the very text SQLAlchemy's own bind writes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from sqlalchemy.dialects import sqlite

from proctor.store import _schema as t
from proctor.store._bulk import _statement

_ZONES = [None, UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11))]
_MOMENTS = [
    datetime(2026, 12, 2, 4, 5, 6, 789012),
    datetime(2026, 12, 2, 4, 5, 6),  # no microseconds: still written with six digits
    datetime(1999, 12, 31, 23, 59, 59, 999999),
    datetime(1000, 1, 1, 12, 0, 0, 1),
    datetime(999, 6, 15, 12, 0, 0),  # a year of three digits is padded to four
    datetime(2024, 2, 29, 0, 0, 0, 500),
]


@pytest.mark.parametrize("zone", _ZONES, ids=["naive", "utc", "plus-0530", "minus-11"])
@pytest.mark.parametrize("moment", _MOMENTS, ids=lambda m: m.isoformat())
def test_a_time_is_bound_as_sqlalchemy_binds_it(moment: datetime, zone: timezone | None) -> None:
    dialect = sqlite.dialect()
    value = moment.replace(tzinfo=zone)
    general = t.messages.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)
    assert general is not None
    statement = _statement(dialect, t.messages, ("source_id", "created_at"), False)
    index, _key, fast = next(p for p in statement.processors if p[1] == "created_at")
    assert statement.keys[index] == "created_at"
    assert fast(value) == general(value)
    assert fast(None) is None


def test_a_date_that_is_not_a_datetime_takes_sqlalchemy_s_own_bind() -> None:
    dialect = sqlite.dialect()
    general = t.messages.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)
    assert general is not None
    statement = _statement(dialect, t.messages, ("source_id", "created_at"), False)
    fast = next(p for p in statement.processors if p[1] == "created_at")[2]
    with pytest.raises(AttributeError):
        general(date(2026, 1, 2))  # UTCDateTime takes datetimes only, either way
    with pytest.raises(AttributeError):
        fast(date(2026, 1, 2))
