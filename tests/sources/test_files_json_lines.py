"""The JSON Lines reader (``read_jsonl_objects``) and ``parse_json`` against the rule the
module documents, written here from the parsers themselves: a line is read by orjson,
or by Python's parser when orjson refuses it or when it holds twenty digits in a row or
a minus sign and nineteen (an integer orjson would read as a float, kept exact); a
record nested deeper than ``MAX_JSON_DEPTH`` levels is refused. The reader tests those
cheaply, without a regular expression, and reads most lines without ``parse_json``: the
values (types included), the issues and their line numbers must be what the rule
gives, wherever a long number sits (in an array, nested, negative, with an exponent, in
a string) and however deep a line nests."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources._files import JSONProblem, _nests_deeper, parse_json, read_jsonl_objects
from proctor.transcript import MAX_JSON_DEPTH, SourceIssue, nesting_problem
from tests.properties import examples

_LONG_NUMBER = re.compile(rb"[0-9]{20}|-[0-9]{19}")
"""The documented test for a line Python's parser reads: a regular expression here, so
the reader's own cheaper test is checked against another way of making it."""


def _depth(value: Any) -> int:
    """Levels of lists and objects in ``value`` (0 for a scalar)."""
    if isinstance(value, dict):
        return 1 + max((_depth(child) for child in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(child) for child in value), default=0)
    return 0


def _rule(text: bytes) -> Any:
    """The value of ``text`` (no byte order mark, stripped) by the documented rule, or
    ``JSONProblem`` for a text Python's parser refuses too or one nested too deep."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(text.decode("utf-8"))
        except ValueError:
            return JSONProblem("refused")
    else:
        if _LONG_NUMBER.search(text):
            value = json.loads(text.decode("utf-8"))
    if _depth(value) > MAX_JSON_DEPTH:
        return JSONProblem("too deep")
    return value


def _strict(value: Any) -> Any:
    """``value`` with every type spelt out: ``1``, ``1.0`` and ``True`` differ, as do
    ``0.0`` and ``-0.0``; NaN equals NaN; key order counts."""
    if isinstance(value, dict):
        return ("dict", tuple((key, _strict(child)) for key, child in value.items()))
    if isinstance(value, list):
        return ("list", tuple(_strict(child) for child in value))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    return (type(value).__name__, value)


_EDGES = [
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    2**64 + 1,
    -(2**63),
    -(2**63) - 1,
    -(2**64),
    10**18,
    10**19 - 1,
    10**19,
    10**20,
    -(10**18),
    -(10**19) + 1,
    -(10**19),
    1234567890123456789,
    -1234567890123456789,
    12345678901234567890,
    -12345678901234567890,
]
_INTEGERS = st.one_of(
    st.sampled_from(_EDGES),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=-1000, max_value=1000),
).map(str)
_DIGIT_RUNS = st.integers(min_value=1, max_value=24).flatmap(
    lambda size: st.text(alphabet="0123456789", min_size=size, max_size=size)
)
_FLOATS = st.builds(
    lambda sign, whole, fraction, exponent: (
        sign + whole.lstrip("0").rjust(1, "0") + fraction + exponent
    ),
    st.sampled_from(["", "-"]),
    _DIGIT_RUNS,
    st.one_of(st.just(""), _DIGIT_RUNS.map(lambda digits: "." + digits)),
    st.one_of(
        st.just(""),
        st.builds(
            lambda mark, sign, power: f"{mark}{sign}{power}",
            st.sampled_from(["e", "E"]),
            st.sampled_from(["", "+", "-"]),
            st.integers(min_value=0, max_value=40),
        ),
    ),
)
_STRINGS = st.one_of(
    st.text(max_size=8),
    st.lists(
        st.one_of(
            _DIGIT_RUNS,
            st.sampled_from(["-", "x", "{", "[", "]", "}", " ", "\\", '"', "\u00e9"]),
        ),
        max_size=5,
    ).map("".join),
).map(json.dumps)
_SCALARS = st.one_of(
    _INTEGERS,
    _FLOATS,
    _STRINGS,
    st.sampled_from(["true", "false", "null", "NaN", "-Infinity"]),
)
_COMMA = st.sampled_from([",", ", "])
_COLON = st.sampled_from([":", ": "])


def _array(items: list[str], comma: str) -> str:
    return "[" + comma.join(items) + "]"


def _object(pairs: list[tuple[str, str]], comma: str, colon: str) -> str:
    return "{" + comma.join(key + colon + item for key, item in pairs) + "}"


_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.builds(_array, st.lists(inner, max_size=4), _COMMA),
        st.builds(_object, st.lists(st.tuples(_STRINGS, inner), max_size=4), _COMMA, _COLON),
    ),
    max_leaves=16,
)
_RECORDS = st.builds(
    _object, st.lists(st.tuples(_STRINGS, _VALUES), min_size=1, max_size=5), _COMMA, _COLON
)
"""The text of a JSON object with long numbers, in any spelling, anywhere in it."""


def _read(path: Path) -> tuple[list[tuple[int, Any]], list[SourceIssue]]:
    objects: list[tuple[int, Any]] = []
    issues: list[SourceIssue] = []
    read_jsonl_objects(path, lambda value, number: objects.append((number, value)), issues)
    return objects, issues


def _expected(lines: list[bytes]) -> tuple[list[tuple[int, Any]], list[int]]:
    """The objects (with their line numbers) and the lines with an issue, by the rule."""
    objects: list[tuple[int, Any]] = []
    issue_lines: list[int] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        while text.startswith(b"\xef\xbb\xbf"):
            text = text[3:].lstrip()
        if not text:
            continue
        value = _rule(text)
        if isinstance(value, dict):
            objects.append((number, value))
        else:
            issue_lines.append(number)
    return objects, issue_lines


@settings(max_examples=examples(400), deadline=None)
@given(record=_RECORDS)
def test_parse_json_follows_the_rule(record: str) -> None:
    text = record.encode()
    expected = _rule(text)
    if isinstance(expected, JSONProblem):
        with pytest.raises(JSONProblem):
            parse_json(text)
    else:
        assert _strict(parse_json(text)) == _strict(expected)


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(
        st.tuples(
            _RECORDS,
            st.sampled_from([b"\n", b"\n", b"\r\n", b" \n", b""]),
            st.sampled_from([b"", b"", b" ", b"\xef\xbb\xbf"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_lines_read_by_the_rule(
    tmp_path_factory: Any, records: list[tuple[str, bytes, bytes]]
) -> None:
    # Every line but the last ends in a newline, whatever ending was drawn for it.
    lines = [start + record.encode() + ending for record, ending, start in records]
    lines = [line if line.endswith(b"\n") else line + b"\n" for line in lines[:-1]] + [lines[-1]]
    path = tmp_path_factory.mktemp("lines") / "session.jsonl"
    path.write_bytes(b"".join(lines))
    objects, issues = _read(path)
    expected_objects, issue_lines = _expected(lines)
    assert [(number, _strict(value)) for number, value in objects] == [
        (number, _strict(value)) for number, value in expected_objects
    ]
    assert [issue.line for issue in issues] == issue_lines


@pytest.mark.parametrize(
    "number",
    [
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "-12345678901234567890",
    ],
)
@pytest.mark.parametrize(
    "template",
    [
        '{"n": %s}',
        '{"n": [1, 2, %s]}',
        '{"a": {"b": [{"c": %s}]}}',
        '{"s": "x", "n": [[[%s]]], "t": "2026-02-10T22:57:54.764Z"}',
    ],
)
def test_integers_past_64_bits_are_exact_in_a_file(
    tmp_path: Path, number: str, template: str
) -> None:
    line = (template % number).encode()
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"first": 1}\n' + line + b"\n" + line + b"\n" + line)
    objects, issues = _read(path)
    assert issues == []
    expected = json.loads(line)
    assert [number for number, _ in objects] == [1, 2, 3, 4]
    for _, value in objects[1:]:
        assert _strict(value) == _strict(expected)
        assert json.dumps(value) == json.dumps(expected)  # an int stays an int


def _nested(levels: int, padding: int = 0) -> bytes:
    """A record ``levels`` lists and objects deep (itself the first), alternating, with
    ``padding`` brackets in a string beside it."""
    text = "1"
    for level in range(levels - 1, 0, -1):
        text = f"[{text}]" if level % 2 else '{"k": ' + text + "}"
    return ('{"pad": "' + "[{" * padding + '", "v": ' + text + "}").encode()


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH])
@pytest.mark.parametrize("padding", [0, 200])
def test_a_record_at_the_depth_limit_is_read(tmp_path: Path, levels: int, padding: int) -> None:
    line = _nested(levels, padding)
    assert _depth(json.loads(line)) == levels
    path = tmp_path / "session.jsonl"
    path.write_bytes(line + b"\n" + line)
    objects, issues = _read(path)
    assert issues == []
    assert [number for number, _ in objects] == [1, 2]
    assert objects[0][1] == json.loads(line)
    assert parse_json(line) == json.loads(line)


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 2, 300])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_a_record_past_the_depth_limit_is_refused(
    tmp_path: Path, levels: int, ending: bytes
) -> None:
    line = _nested(levels)
    assert _depth(json.loads(line)) == levels
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"a": 1}\n' + line + b"\n" + line + ending)
    objects, issues = _read(path)
    assert [number for number, _ in objects] == [1]
    reason = (
        "field v[0].k[0].k[0].k[0]… is nested deeper than "
        f"{MAX_JSON_DEPTH} levels (the limit for one record); line skipped"
    )
    assert [(issue.line, issue.reason, issue.severity) for issue in issues] == [
        (2, reason, "error"),
        (3, reason, "error"),
    ]
    with pytest.raises(JSONProblem, match="nested deeper than"):
        parse_json(line)


def test_a_line_orjson_refuses_is_read_by_python(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(
        b'{"a": NaN, "n": 18446744073709551616}\n{"a": "\\ud800"}\n{"a": 1} {"b": 2}\n{"a": 1}'
    )
    objects, issues = _read(path)
    assert [number for number, _ in objects] == [1, 2, 4]
    assert objects[0][1]["n"] == 2**64
    assert math.isnan(objects[0][1]["a"])
    assert objects[1][1] == {"a": "\ud800"}
    assert [(issue.line, issue.reason[:13]) for issue in issues] == [(3, "invalid JSON ")]


_NESTED = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=2)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=24,
)


@settings(max_examples=examples(500), deadline=None)
@given(value=_NESTED.filter(lambda value: isinstance(value, dict | list)), limit=st.integers(1, 8))
def test_the_quick_depth_test_is_nesting_problems(value: Any, limit: int) -> None:
    assert _nests_deeper(value, limit) == (nesting_problem(value, limit) is not None)
    assert _nests_deeper(value, limit) == (_depth(value) > limit)
