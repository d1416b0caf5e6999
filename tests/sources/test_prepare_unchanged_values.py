"""The fast path for JSON values preparation leaves as they are (``_prepare._unchanged``)
stores exactly what the value-by-value walk stores, with the same redaction counts."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources import _prepare
from proctor.sources._prepare import Limits, _Sanitizer
from tests.properties import examples
from tests.sources.json_values import SECRET as _SECRET
from tests.sources.json_values import TEXT as _TEXT
from tests.sources.json_values import VALUES as _VALUES


def _walked(value: Any, limit: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict[str, int]]:
    clean = _Sanitizer(Limits())
    with monkeypatch.context() as patched:
        patched.setattr(_prepare, "_unchanged", lambda value, limit: None)
        result = clean.value(value, limit)
    return result, dict(clean.redactor.counts)


def _stored(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


@settings(max_examples=examples(400), deadline=None)
@given(value=st.one_of(st.lists(_VALUES, min_size=1), st.dictionaries(_TEXT, _VALUES, min_size=1)))
def test_the_fast_path_stores_what_the_walk_stores(value: Any) -> None:
    monkeypatch = pytest.MonkeyPatch()
    for limit in (4_096, 65_536):
        clean = _Sanitizer(Limits())
        fast = clean.value(value, limit)
        walked, counts = _walked(value, limit, monkeypatch)
        assert _stored(fast) == _stored(walked)
        assert dict(clean.redactor.counts) == counts


@pytest.mark.parametrize(
    "value",
    [
        {"a": 2**63},
        {"a": math.nan},
        {"a": [math.inf]},
        {"a": (1, 2)},
        {"command": f"echo {_SECRET}"},
        {"path": "x "},
        {"k": "x" * 5000},
    ],
)
def test_values_the_fast_path_leaves_to_the_walk(value: Any) -> None:
    assert _prepare._unchanged(value, 4_096) is None


def test_a_plain_value_is_copied_not_shared() -> None:
    value = {"command": "ls -la", "nested": {"list": [1, 2.5, None, True]}}
    copy = _prepare._unchanged(value, 4_096)
    assert copy == value
    assert copy is not value
    assert copy["nested"] is not value["nested"]
