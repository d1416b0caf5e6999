"""The quick tests preparation runs before (or instead of) a regular expression give the
answer the expression gives: a base64 run, nineteen digits, a JSON string ending in a
blank, a surrogate code point. Preparation stores what it stored before they existed."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources import _prepare
from proctor.sources._prepare import Limits, _Sanitizer
from proctor.transcript import _json, canonical_time
from tests.properties import examples

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{2048,}")

_PIECES = st.sampled_from(
    [
        "A1b2",
        "+/",
        "=",
        " ",
        "\t",
        "\n",
        "\x0b",
        "\x1c",
        "\x1f",
        "\\",
        '"',
        "é",
        "\u00e9\u0301",
        "\ud800",
        "\udfff",
        "\U0001f600",
        "0123456789",
        "9",
        "-",
    ]
)


def _texts(repeat: int) -> st.SearchStrategy[str]:
    """Texts built of pieces, some repeated into long runs (the cases the tests cut)."""
    run = st.tuples(_PIECES, st.integers(1, repeat)).map(lambda pair: pair[0] * pair[1])
    return st.lists(st.one_of(run, st.text(max_size=20)), max_size=12).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(_texts(700))
def test_the_base64_run_test_agrees_with_the_expression(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    assert _prepare._base64_run_in(data) == (_BASE64_RUN.search(data) is not None)


@settings(max_examples=examples(300), deadline=None)
@given(_texts(25))
def test_the_digit_run_test_agrees_with_the_expression(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    shape = data.translate(_prepare._DIGIT_SHAPE)
    assert (_prepare._LONG_DIGITS in shape) == (_LONG_DIGITS.search(data) is not None)


@settings(max_examples=examples(300), deadline=None)
@given(_texts(4))
def test_the_surrogate_test_agrees_with_the_expression(text: str) -> None:
    assert _json._has_surrogate(text) == (_SURROGATE.search(text) is not None)
    expected = "\x00" not in text and _SURROGATE.search(text) is None
    assert _json.is_clean_text(text) == expected


def test_a_long_base64_run_in_a_text_still_becomes_a_placeholder() -> None:
    clean = _Sanitizer(Limits())
    payload = "QUJDRGVm0123" * 400
    text, _ = clean.text(f"before {payload} after", 1_000_000)
    assert text == f"before [base64 data, {len(payload) * 3 // 4} bytes] after"
    accented, _ = clean.text(f"é{payload}é", 1_000_000)
    assert accented == f"é[base64 data, {len(payload) * 3 // 4} bytes]é"
    short = "QUJDRGVm0123" * 100
    assert clean.text(short, 1_000_000)[0] == short


def test_a_time_hashed_again_gives_its_own_text() -> None:
    start = datetime(2025, 6, 26, 11, 41, 38, 123_000, tzinfo=UTC)
    times = [start + timedelta(microseconds=997 * n) for n in range(5_000)]
    for moment in times + [moment + timedelta(0) for moment in times]:  # equal, not the same
        assert canonical_time(moment) == moment.isoformat(timespec="milliseconds")
    shifted = start.astimezone(timezone(timedelta(hours=2)))
    assert canonical_time(shifted) == canonical_time(start) == "2025-06-26T11:41:38.123+00:00"
    naive = start.replace(tzinfo=None)
    assert canonical_time(naive) == "2025-06-26T11:41:38.123+00:00"
