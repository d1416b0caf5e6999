"""Redaction's anchor scan (``bytes.lower`` of the UTF-8) finds what ``str.lower`` finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.redaction import _ALL_ANCHORS, _ANCHOR_FINDER, _anchors_in
from tests.properties import examples

# Texts built from anchors in any case, the characters whose lower case is ASCII, other
# letters that change under ``str.lower`` and lone surrogates, so anchors meet them.
_PIECES = st.sampled_from(
    [
        *_ALL_ANCHORS,
        *(a.upper() for a in _ALL_ANCHORS),
        *("\u0130", "\u212a", "\u212aEY", "ß", "Σ", "ſ", "é", "\ud800", "-", " ", "=", "K"),
        "\U0001f600",
    ]
)
_TEXTS = st.lists(_PIECES | st.text(max_size=4), max_size=12).map("".join)


def _reference(text: str) -> set[str]:
    """The scan as it was: ``str.lower`` of the whole text, then its UTF-8."""
    lowered = text.lower().encode("utf-8", "surrogatepass")
    return {
        _ALL_ANCHORS[number]
        for number, _, _ in _ANCHOR_FINDER.find_matches_as_indexes(lowered, overlapping=True)
    }


@settings(max_examples=examples(500), deadline=None)
@given(text=_TEXTS)
def test_the_anchors_found_are_those_of_the_lowered_text(text: str) -> None:
    assert _anchors_in(text) == _reference(text)


def test_a_kelvin_sign_still_spells_key() -> None:
    assert "key" in _anchors_in("API_\u212aEY=abc")
    assert "asia" in _anchors_in("AS\u0130A") or "asia" not in _reference("AS\u0130A")
    assert _anchors_in("AS\u0130A") == _reference("AS\u0130A")
