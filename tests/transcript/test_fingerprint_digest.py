"""Fingerprints are the BLAKE2b (16 bytes) of the canonical JSON, whatever way the hash
is started: the same hex digests as ``hashlib.blake2b(data, digest_size=16)``."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.transcript import _fingerprint, storable
from tests.properties import examples

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(),
        st.text(),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers()), inner, max_size=4),
    ),
    max_leaves=12,
)


def _expected(payload: Any) -> str:
    try:
        data = orjson.dumps(payload, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        data = orjson.dumps(storable(payload), option=_OPTIONS)
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@settings(max_examples=examples(400), deadline=None)
@given(payload=_VALUES)
def test_a_digest_is_the_blake2b_of_the_canonical_json(payload: Any) -> None:
    assert _fingerprint._digest(payload) == _expected(payload)
    assert _fingerprint._digest(payload) == _expected(payload)  # the start is not worn


def test_known_digests_stay() -> None:
    assert _fingerprint._digest(("message", "c", "user", "prompt", None, "hi", None)) == (
        hashlib.blake2b(
            b'["message","c","user","prompt",null,"hi",null]', digest_size=16
        ).hexdigest()
    )
    assert _fingerprint._digest({"b": 1, "a": [2**70]}) == (
        hashlib.blake2b(b'{"a":["1180591620717411303424"],"b":1}', digest_size=16).hexdigest()
    )
