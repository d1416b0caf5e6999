"""A small flat attributes object is prepared by the value-by-value walk written out
(``_prepare._flat``): it stores exactly what the general path stores, with the same
redaction and truncation counts, and objects it does not fit go the general way."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources import _prepare
from proctor.sources._prepare import Limits, _Sanitizer
from tests.properties import examples
from tests.sources.json_values import SECRET, TEXT

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.sampled_from(
        [
            SECRET,
            f"Bearer {SECRET}",
            "x " * 3,
            "short  ",
            "ca\u0301fe\u0301 au lait",
            "a\x00b",
            "\ud800 lone",
            "y" * 5_000,
            "data:image/png;base64," + "QUJD" * 40,
        ]
    ),
)
_FLAT_ENOUGH = st.dictionaries(
    st.one_of(TEXT, st.sampled_from(["a\x00", "é", "requestId"])), _SCALARS, max_size=20
)


def _general(value: dict[str, Any]) -> tuple[bytes, dict[str, int], int]:
    """What the general path (``_Sanitizer.value``) stores, its counts."""
    clean = _Sanitizer(Limits())
    stored = clean.value(value, Limits().max_attribute_chars) if value else {}
    return _stored(stored), dict(clean.redactor.counts), clean.truncated


def _prepared(value: dict[str, Any]) -> tuple[bytes, dict[str, int], int]:
    clean = _Sanitizer(Limits())
    stored = clean.attributes(value)
    return _stored(stored), dict(clean.redactor.counts), clean.truncated


def _stored(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


@settings(max_examples=examples(500), deadline=None)
@given(value=_FLAT_ENOUGH)
def test_attributes_store_what_the_general_path_stores(value: dict[str, Any]) -> None:
    assert _prepared(value) == _general(value)


@pytest.mark.parametrize(
    "value",
    [
        {"request_id": "req_011CUaBcDeFgHiJkLmNoPq", "stop_reason": "tool_use"},
        {"durationMs": 12, "interrupted": False, "isImage": False, "stdoutChars": 40},
        {"token": SECRET},
        {"note": "y" * 5_000},
        {"cwd": "/home/dev/proj  ", "mode": "fast  ", "empty": ""},
        {"x": "é" * 3},
        {},
    ],
)
def test_flat_objects_take_the_written_out_walk(
    value: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """These are flat: no serialise-and-compare pass, and still the general path's rows
    (a secret redacted and counted, a long text bounded and counted)."""
    expected = _general(value)
    assert not value or _prepare._flat(value)
    monkeypatch.setattr(_prepare, "_unchanged", _refused)
    assert _prepared(value) == expected
    if "token" in value:
        assert SECRET.encode() not in expected[0] and expected[1]
    if "note" in value:
        assert expected[2] == 1


@pytest.mark.parametrize(
    "value",
    [
        {"nested": {"a": 1}},
        {"list": [1, 2]},
        {"big": 2**63},
        {"ratio": 0.5},
        {"a\x00": 1},
        {"a": "x" * 9, "b": "y" * 9, "c": "z" * 9},
        {str(number): number for number in range(17)},
    ],
)
def test_other_objects_go_the_general_way(value: dict[str, Any]) -> None:
    assert not _prepare._flat(value)
    assert _prepared(value) == _general(value)


def _refused(value: Any, limit: int, *, owned: bool = False) -> Any:
    raise AssertionError("a flat object is walked, not serialised and compared")
