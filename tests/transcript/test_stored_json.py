"""Fingerprints, canonical JSON and the stored form take any value JSON allows."""

from __future__ import annotations

import math

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.transcript import (
    MAX_STORED_DEPTH,
    Message,
    ToolCall,
    canonical_json,
    clean_text,
    content_hash,
    message_fingerprint,
    nesting_problem,
    storable,
    tool_call_fingerprint,
)
from proctor.transcript._json import TOO_DEEP


def _nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_128_bit_integer_in_tool_arguments_is_fingerprinted_instead_of_crashing() -> None:
    # The reported crash: R-Judge's `0x8f3a…` read by a Python literal parser.
    call = ToolCall("c1", "Send", {"to": 0x8F3A9B2C4D5E6F708192A3B4C5D6E7F8})
    first = tool_call_fingerprint(call, "conv")
    assert first == tool_call_fingerprint(call, "conv")
    other = ToolCall("c1", "Send", {"to": 0x8F3A9B2C4D5E6F708192A3B4C5D6E7F9})
    assert tool_call_fingerprint(other, "conv") != first


def test_integers_past_64_bits_are_stored_as_their_decimal_text() -> None:
    assert storable({"n": 2**64, "m": -(2**63) - 1, "ok": 2**63 - 1}) == {
        "n": "18446744073709551616",
        "m": "-9223372036854775809",
        "ok": 2**63 - 1,
    }
    assert orjson.loads(canonical_json({"n": 2**100})) == {"n": str(2**100)}


def test_non_finite_numbers_are_stored_as_their_names() -> None:
    value = storable([math.nan, math.inf, -math.inf, 1.5])
    assert value == ["NaN", "Infinity", "-Infinity", 1.5]


def test_nul_and_lone_surrogates_become_the_replacement_character() -> None:
    assert clean_text("a\x00b") == "a\ufffdb"
    assert clean_text("x\ud800y\udfffz") == "x\ufffdy\ufffdz"
    # A pair written as two escapes is the character it encodes, not two replacements.
    assert clean_text("\ud83d\ude00") == "\U0001f600"
    assert storable({"k\x00": ["\udc00"]}) == {"k\ufffd": ["\ufffd"]}


def test_a_message_with_a_lone_surrogate_gets_a_fingerprint() -> None:
    message = Message("m1", "user", "prompt", "broken \ud800 text")
    assert len(message_fingerprint(message, "conv")) == 32


def test_nesting_past_the_stored_depth_is_cut_and_marked() -> None:
    stored = storable(_nested(MAX_STORED_DEPTH + 50))
    depth = 0
    while isinstance(stored, dict):
        stored = stored["a"]
        depth += 1
    assert (depth, stored) == (MAX_STORED_DEPTH, TOO_DEEP)


def test_a_tool_input_nested_300_deep_is_hashed_without_a_recursion_error() -> None:
    call = ToolCall("c1", "Bash", {"input": _nested(300)})
    assert len(tool_call_fingerprint(call, "conv")) == 32
    assert len(content_hash("f", attributes={"deep": _nested(1000)})) == 32


def test_the_nesting_problem_names_the_field_where_the_limit_is_passed() -> None:
    record = {"message": {"content": [{"input": _nested(150)}]}}
    problem = nesting_problem(record, 100)
    assert problem is not None
    assert problem.startswith("field message.content[0].input.a.a.a.a…")
    assert "deeper than 100 levels" in problem
    assert nesting_problem({"message": {"content": [1, 2]}}, 100) is None


def test_keys_of_other_types_are_stored_as_json_writes_them() -> None:
    assert storable({1: "a", None: "c", 2.5: "d"}) == {"1": "a", "null": "c", "2.5": "d"}
    assert storable({True: "b"}) == {"true": "b"}


@pytest.mark.parametrize("value", [2**4000, -(2**5000)])
def test_integers_past_python_s_decimal_limit_are_stored_in_hex(value: int) -> None:
    stored = storable(value)
    assert isinstance(stored, str) and int(stored, 0) == value


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(alphabet=st.characters(exclude_categories=())),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(_JSON)
def test_any_json_value_has_a_stored_form_every_encoder_takes(value: object) -> None:
    stored = storable(value)
    text = orjson.dumps(stored, option=orjson.OPT_SORT_KEYS)
    assert "\x00" not in text.decode()
    assert storable(stored) == stored  # the stored form is its own stored form
    assert canonical_json(value) == canonical_json(value)
