"""Date-aware ranking: questions about time favour turns that say when or happened then."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from proctor.search import index_sources, search
from proctor.search._temporal import asks_when, named_window, says_when
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write

NOW = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "query",
    [
        "When did Ann adopt her cat?",
        "what year did the shop open",
        "Which month was the recital?",
        "How long has Bo played the violin?",
        "Since when is the build red?",
        "How many years ago did they move?",
    ],
)
def test_questions_about_time_are_recognised(query: str) -> None:
    assert asks_when(query)


@pytest.mark.parametrize(
    "query", ["What is the name of Ann's cat?", "Where does Bo live?", "whenever it rains"]
)
def test_other_questions_are_not_about_time(query: str) -> None:
    assert not asks_when(query)


@pytest.mark.parametrize(
    "text",
    [
        "I went to a support group yesterday.",
        "We moved here 3 years ago.",
        "The recital is next Saturday!",
        "I started last week and love it",
        "It opened in May, just before the rain",
        "Back in 2019 things were different.",
        "for a couple of months now",
    ],
)
def test_turns_that_state_a_time_say_when(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text", ["I love my cat.", "The build passes again", "May I ask you something?"]
)
def test_turns_without_a_time_do_not(text: str) -> None:
    assert not says_when(text)


def _day(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did Ann do on 8 May 2023?", _day(2023, 5, 8), _day(2023, 5, 9)),
        ("what happened on May 8th, 2023", _day(2023, 5, 8), _day(2023, 5, 9)),
        ("tests that failed on 2026-02-10", _day(2026, 2, 10), _day(2026, 2, 11)),
        ("What did Bo paint in June 2023?", _day(2023, 6, 1), _day(2023, 7, 1)),
        ("deploys during 2022", _day(2022, 1, 1), _day(2023, 1, 1)),
        ("what broke yesterday", _day(2026, 11, 19), _day(2026, 11, 20)),
        ("what did the agent change last week", _day(2026, 11, 6), NOW + timedelta(seconds=1)),
    ],
)
def test_a_named_time_becomes_a_window(query: str, start: datetime, end: datetime) -> None:
    window = named_window(query, NOW)
    assert window is not None
    assert (window.start, window.end) == (start, end)


def test_a_query_without_a_time_has_no_window() -> None:
    assert named_window("What is the name of Ann's cat?", NOW) is None
    assert named_window("May I see the report?", NOW) is None


def test_three_weeks_ago_is_a_loose_window_around_that_day() -> None:
    window = named_window("the refactor we did three weeks ago", NOW)
    assert window is not None
    assert window.holds(NOW - timedelta(days=21))
    assert window.holds(NOW - timedelta(days=23))  # half a week either side
    assert not window.holds(NOW - timedelta(days=26))
    assert not window.holds(NOW - timedelta(days=2))


# -- in search -----------------------------------------------------------------------------

RECITALS = [
    ("Bo", "The violin recital went really well."),
    ("Ann", "Pixel knocked over my plant again."),
    ("Bo", "The violin recital was three weeks ago."),
    ("Ann", "Pixel knocked over my plant again."),
]


def test_a_when_question_ranks_the_turn_that_says_when_first(store: SqlStore) -> None:
    write(store, dialogue("c1", RECITALS))
    index_sources(store, encoder=None)
    plain = search(store, "How was the violin recital?", encoder=None)
    asked = search(store, "When was the violin recital?", encoder=None)
    assert plain.hits[0].doc_id == "c1:t0"  # the shorter turn matches best by words
    assert asked.hits[0].doc_id == "c1:t2"  # the turn that says when
    assert {h.doc_id for h in asked.hits} == {h.doc_id for h in plain.hits}


def test_a_query_naming_a_month_prefers_what_happened_then(store: SqlStore) -> None:
    bundle = dialogue(
        "c1",
        [
            ("Bo", "Practised the violin scales for an hour."),
            ("Bo", "Practised the violin scales for an hour."),
        ],
    )
    may, june = bundle.messages
    bundle = replace(
        bundle,
        messages=(
            replace(may, created_at=datetime(2023, 5, 8, 10, tzinfo=UTC)),
            replace(june, created_at=datetime(2023, 6, 9, 10, tzinfo=UTC)),
        ),
    )
    write(store, bundle)
    index_sources(store, encoder=None)
    in_june = search(store, "violin scales practice in June 2023", encoder=None, limit=2)
    in_may = search(store, "violin scales practice in May 2023", encoder=None, limit=2)
    assert [h.doc_id for h in in_june.hits] == ["c1:t1", "c1:t0"]
    assert [h.doc_id for h in in_may.hits] == ["c1:t0", "c1:t1"]


def test_relative_words_are_read_against_the_time_of_the_search(store: SqlStore) -> None:
    bundle = dialogue(
        "c1",
        [("Dev", "The export job timed out again."), ("Dev", "The export job timed out again.")],
    )
    old, recent = bundle.messages
    bundle = replace(
        bundle,
        messages=(
            replace(old, created_at=NOW - timedelta(days=60)),
            replace(recent, created_at=NOW - timedelta(days=1)),
        ),
    )
    write(store, bundle)
    index_sources(store, encoder=None)
    hits = search(store, "export job timed out yesterday", encoder=None, now=NOW).hits
    assert [h.doc_id for h in hits] == ["c1:t1", "c1:t0"]
    earlier = search(store, "export job timed out 2 months ago", encoder=None, now=NOW).hits
    assert [h.doc_id for h in earlier] == ["c1:t0", "c1:t1"]


def test_the_week_after_a_named_day_counts_half_as_what_is_told_later() -> None:
    window = named_window("What film did Ann watch on 1 May 2022?", NOW)
    assert window is not None
    assert window.share(_day(2022, 5, 1) + timedelta(hours=20)) == 1.0
    assert window.share(_day(2022, 5, 2) + timedelta(hours=11)) == 0.5  # "last night …"
    assert window.share(_day(2022, 5, 10)) == 0.0
    assert window.share(_day(2022, 4, 30)) == 0.0
    assert window.share(None) == 0.0
