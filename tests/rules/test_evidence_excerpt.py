"""Excerpts: whitespace collapsed, at most ``EXCERPT_CHARS`` characters, the same whether
the whole cited text is read or only as much of it as the excerpt needs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules._evidence import EXCERPT_CHARS, _excerpt
from tests.properties import examples


def _plain(text: str) -> str:
    piece = " ".join(text.split())
    return piece if len(piece) <= EXCERPT_CHARS else piece[: EXCERPT_CHARS - 1] + "…"


@pytest.mark.slow
@settings(max_examples=examples(2000), deadline=None)
@given(
    st.lists(
        st.sampled_from(["word", "x" * 90, " ", "  ", "\n", "\t\t", " " * 300, "é", "\u2003"]),
        max_size=80,
    ).map("".join)
)
def test_an_excerpt_is_the_collapsed_text_cut_short(text: str) -> None:
    assert _excerpt(text, None, None) == _plain(text)
    assert _excerpt(text, 3, len(text) - 2) == _plain(text[3 : len(text) - 2])


def test_a_long_text_is_cut_with_an_ellipsis() -> None:
    excerpt = _excerpt("word   " * 500, None, None)
    assert len(excerpt) == EXCERPT_CHARS and excerpt.endswith("…") and "  " not in excerpt
