""" "The same action" means the same as comparing the arguments' key-sorted JSON.

``action_key`` builds the key from plain values and their ``repr`` (faster than encoding
JSON); these tests hold that two calls get equal keys exactly when their normalised
arguments encode to the same key-sorted JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules.builtin._loop_track import _IGNORED_ARGUMENTS, action_key
from proctor.transcript import ToolCall
from tests.properties import examples

_WHITESPACE = re.compile(r"\s+")


def _plain(value: Any) -> Any:
    """The reference normalisation: whitespace collapsed, presentation keys dropped."""
    if isinstance(value, str):
        return _WHITESPACE.sub(" ", value).strip()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if str(k) not in _IGNORED_ARGUMENTS}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _json_key(name: str, arguments: Any) -> str:
    body = json.dumps(_plain(arguments), sort_keys=True, ensure_ascii=False, default=str)
    return f"{name.lower()}\x00{body}"


_TEXT = st.text(alphabet=st.sampled_from("ab1 \t\n\u00a0\u2003x\"'\\,:[]{}()"), max_size=8)
_SCALARS = st.one_of(
    _TEXT,
    st.sampled_from([0, 1, -1, 1.0, 0.0, 2.5, True, False, None, "1", "true", "null", "1.0"]),
)
_KEYS = st.sampled_from(["a", "b", "A", "description", "timeout", "1", "a b", "reason"])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=8,
)


def _call(arguments: Any) -> ToolCall:
    return ToolCall(source_id="c", name="Send_Email", arguments=arguments)


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(_VALUES, _VALUES)
def test_equal_keys_exactly_when_the_sorted_json_is_equal(first: Any, second: Any) -> None:
    same_json = _json_key("send_email", first) == _json_key("send_email", second)
    assert (action_key(_call(first)) == action_key(_call(second))) == same_json


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=4), st.randoms(use_true_random=False))
def test_reordered_keys_and_reflowed_text_are_the_same_action(
    arguments: dict[str, Any], shuffle: Any
) -> None:
    items = list(arguments.items())
    shuffle.shuffle(items)
    reflowed = {
        k: (f"  {v}\n" if isinstance(v, str) else v) for k, v in items
    }  # more whitespace around text, keys in another order
    assert action_key(_call(arguments)) == action_key(_call(reflowed))
