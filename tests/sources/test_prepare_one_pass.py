"""The one-pass test of a serialised JSON value (``_prepare._kept_as_dumped``) keeps a
value only where the walk stores it as it is, and an owned value it cannot keep goes
straight to the walk: the same stored value and the same redaction counts as the walk."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.redaction import ANCHORS, Redactor
from proctor.sources import _prepare, parse_json
from proctor.sources._prepare import Limits, _Sanitizer
from tests.properties import examples
from tests.sources.json_values import SECRET

_TRAILING_BLANK = re.compile(rb'(?: |\\[tnrf]|\\u00(?:0b|1[c-f]))"')
"""The expression the ``_BLANK_ENDINGS`` stand for (as written before they existed)."""

_PIECES = st.sampled_from(
    [
        "ls -la",
        "plain words",
        " ",
        "\t",
        "\n",
        "\r",
        "\x0b",
        "\x0c",
        "\x1b",
        "\x1c",
        "\x1f",
        "\x00",
        "\\",
        "\\T",
        "\\N",
        '"',
        "é",
        "\u212aEY=",
        "\u0130",
        "\ud800",
        "\U0001f600",
        "base64,",
        "BASE64,",
        "data:image/png;base64," + "QUJD" * 20,
        "A1b2" * 520,
        "1234567890123456789",
        "null",
        "API_KEY=",
        "TOKEN: ",
        "max_tokens",
        "https://example.org/a",
        "https://user:pa55w0rd@example.org",
        "sk_live_",
        SECRET,
        "Authorization: Bearer abcdefghijklmnop1234",
        "AKIAIOSFODNN7EXAMPLE",
    ]
)
_ANCHOR_PIECES = st.sampled_from(ANCHORS).flatmap(
    lambda anchor: st.sampled_from([anchor, anchor.upper(), anchor.title()])
)
_TEXT = st.lists(st.one_of(_PIECES, _ANCHOR_PIECES, st.text(max_size=6)), max_size=5).map("".join)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=10,
)


def _parsed(value: Any) -> Any:
    """``value`` as an adapter has it: written as JSON text, read by Proctor's parser."""
    return parse_json(json.dumps(value).encode("utf-8", "surrogatepass"))


def _stored(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def _walked(value: Any, limit: int) -> tuple[Any, dict[str, int]]:
    """What preparation stores for ``value`` walked value by value, with its counts."""
    clean = _Sanitizer(Limits())
    return clean._walk(value, limit, 0), dict(clean.redactor.counts)


def _kept_before(dumped: bytes, limit: int) -> bool:
    """``_kept_as_dumped`` as written before its one pass: each test on its own."""
    shape = dumped.translate(_prepare._DIGIT_SHAPE)
    return not (
        len(dumped) > limit
        or not dumped.isascii()
        or b"\\u0000" in dumped
        or b"base64," in dumped
        or _prepare._base64_run_in(dumped)
        or (len(dumped) >= 2 * 128 and shape.count(b"{") >= 128)
        or _prepare._LONG_DIGITS in shape
        or _TRAILING_BLANK.search(dumped) is not None
        or Redactor.may_find_in_ascii(dumped)
    )


@settings(max_examples=examples(400), deadline=None)
@given(value=_VALUES)
def test_the_blank_endings_are_the_matches_of_the_expression(value: Any) -> None:
    try:
        dumped = orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return
    expected = _TRAILING_BLANK.search(dumped) is not None
    assert _ends_in_blank(dumped) == expected
    if expected:  # lower case only adds matches
        assert _prepare._MAY_CHANGE.find_matches_as_indexes(dumped.lower(), overlapping=True)


def _ends_in_blank(dumped: bytes) -> bool:
    """Whether ``dumped`` holds one of ``_BLANK_ENDINGS`` (the one-pass search's part)."""
    return any(ending in dumped for ending in _prepare._BLANK_ENDINGS)


@pytest.mark.parametrize("character", [chr(code) for code in range(128)])
def test_a_string_ending_in_any_ascii_blank_is_found(character: str) -> None:
    for text in (f"a{character}", character, f"a\\{character}"):
        dumped = orjson.dumps({"yek": text, text: 1})
        if text.rstrip() != text:
            assert _ends_in_blank(dumped), text
            assert not _prepare._kept_as_dumped(dumped, 4_096), text
        elif "\\" not in text:  # a backslash and ``n`` read as the escape of a newline
            assert not _ends_in_blank(dumped), text


@settings(max_examples=examples(500), deadline=None)
@given(value=_VALUES, limit=st.sampled_from([64, 4_096, 65_536]))
def test_a_value_the_one_pass_keeps_is_one_the_separate_tests_kept(value: Any, limit: int) -> None:
    try:
        dumped = orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return
    if _prepare._kept_as_dumped(dumped, limit):
        assert _kept_before(dumped, limit)


@settings(max_examples=examples(500), deadline=None)
@given(
    value=st.one_of(
        st.lists(_VALUES, min_size=1, max_size=4),
        st.dictionaries(_TEXT, _VALUES, min_size=1, max_size=4),
    ),
    limit=st.sampled_from([64, 4_096, 65_536]),
)
def test_an_owned_value_is_stored_as_the_walk_stores_it(value: Any, limit: int) -> None:
    parsed = _parsed(value)
    expected, counts = _walked(_parsed(value), limit)
    clean = _Sanitizer(Limits())
    assert _stored(clean.owned_value(parsed, limit)) == _stored(expected)
    assert dict(clean.redactor.counts) == counts
    shared = _Sanitizer(Limits())
    assert _stored(shared.value(_parsed(value), limit)) == _stored(expected)
    assert dict(shared.redactor.counts) == counts


@pytest.mark.parametrize(
    "value",
    [
        {"command": "ls -la", "args": [1, 2.5, False, True]},
        {"file_path": "/src/app.py", "content": "print(1)"},
        ["plain", {"nested": {"deeper": ["text"]}}],
    ],
)
def test_a_plain_owned_value_is_kept_without_a_walk(
    value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = _parsed(value)
    monkeypatch.setattr(_Sanitizer, "_walk", _refuse)
    monkeypatch.setattr(_prepare, "_unchanged", _refuse)
    assert _Sanitizer(Limits()).owned_value(parsed, 4_096) is parsed


@pytest.mark.parametrize(
    "value",
    [
        {"command": f"echo {SECRET}"},
        {"content": "line\n"},
        {"path": "x "},
        {"url": "https://user:pa55w0rd@example.org/x"},
        {"k": "x" * 5000},
        {"a": "caf\u00e9 au lait"},
    ],
)
def test_an_owned_value_that_may_change_is_walked_once(
    value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A serialised owned value that fails the test goes to the walk, not to a second
    # serialisation and test (``_unchanged``) first.
    parsed = _parsed(value)
    expected, counts = _walked(_parsed(value), 4_096)
    monkeypatch.setattr(_prepare, "_unchanged", _refuse)
    clean = _Sanitizer(Limits())
    assert _stored(clean.owned_value(parsed, 4_096)) == _stored(expected)
    assert dict(clean.redactor.counts) == counts


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("not expected on this path")
