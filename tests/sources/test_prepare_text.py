"""Preparation of one text (``_Sanitizer.text``), with its short cut for short ASCII
text and the UTF-8 it shares with redaction, stores what each step applied in turn
stores: ``clean_text``, the data URI and base64 placeholders, redaction, the bound,
``normalise_text``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.redaction import Redactor
from proctor.sources._prepare import (
    _DATA_URI,
    _RAW_BASE64,
    Limits,
    _placeholder_for_base64,
    _placeholder_for_data_uri,
    _Sanitizer,
    bound_text,
)
from proctor.transcript import clean_text, normalise_text
from tests.properties import examples
from tests.sources.json_values import SECRET


def _reference(text: str, limit: int) -> tuple[str, int | None, dict[str, int], int]:
    """Each step in turn, without a quick test: the stored text, the length before the
    bound, the redaction counts and the number of texts truncated."""
    redactor = Redactor()
    text = clean_text(text)
    text = _DATA_URI.sub(_placeholder_for_data_uri, text)
    text = _RAW_BASE64.sub(_placeholder_for_base64, text)
    text = redactor.redact(text)
    bounded, original = bound_text(text, limit)
    return normalise_text(bounded), original, redactor.counts, int(original is not None)


def _prepared(text: str, limit: int) -> tuple[str, int | None, dict[str, int], int]:
    clean = _Sanitizer(Limits())
    stored, original = clean.text(text, limit)
    return stored, original, clean.redactor.counts, clean.truncated


_PIECES = st.sampled_from(
    [
        "ls -la ",
        " ",
        "\n",
        "\t\x0b",
        "\x00",
        "\ud800",
        "\udc00",
        "\ud83d\ude00",
        "e\u0301",
        "é",
        "\u212aEY",
        "\u0130",
        "日本語",
        "base64,",
        "data:image/png;base64," + "QUJD" * 20,
        "data:;base64," + "QUJD" * 16,
        "A1b2" * 100,
        "xYz9+/" * 200,
        "a" * 700,
        SECRET,
        "Authorization: Bearer abcdefghijklmnop1234",
        "export API_KEY=hunter2hunter2",
        "https://user:pa55w0rd@example.org",
        "<think>x</think>",
    ]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=10)), max_size=8).map("".join)


@settings(max_examples=examples(1_000), deadline=None)
@given(text=_TEXT, limit=st.sampled_from([16, 100, 2_047, 4_096, 65_536]))
def test_a_text_is_stored_as_each_step_in_turn_stores_it(text: str, limit: int) -> None:
    assert _prepared(text, limit) == _reference(text, limit)


@pytest.mark.parametrize("length", [2_046, 2_047, 2_048, 2_049, 3_000])
@pytest.mark.parametrize("fill", ["A1b2", "a", "é", "A1b2\x00", f"{SECRET} ", "Qk1+/9" + "\ud800"])
def test_texts_either_side_of_the_short_cut_are_stored_alike(length: int, fill: str) -> None:
    text = (fill * (length // len(fill) + 1))[:length]
    for limit in (64, 2_048, 65_536):
        assert _prepared(text, limit) == _reference(text, limit)
        assert _prepared(text + " \n", limit) == _reference(text + " \n", limit)
