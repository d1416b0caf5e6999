"""An excerpt is the source's text with its whitespace collapsed, cut at its length.

The excerpt is made from the head of a long text only (``_clip`` collapses the first
characters, not all 2,000 read); it must be the excerpt the whole text gives.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from proctor.store._graph_sources import EXCERPT_CHARS, _clip


def _whole(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_TEXT = st.text(alphabet=st.sampled_from(["a", "b", "é", " ", "\n", "\t", "\u3000"]))


@given(
    head=_TEXT,
    spaces=st.integers(min_value=0, max_value=3000),
    tail=_TEXT,
    limit=st.sampled_from([1, 2, 10, EXCERPT_CHARS]),
)
def test_an_excerpt_is_the_collapsed_whole_text_cut_at_its_length(
    head: str, spaces: int, tail: str, limit: int
) -> None:
    text = head + " " * spaces + tail
    assert _clip(text, limit) == _whole(text, limit)


def test_a_long_text_is_cut_with_an_ellipsis_and_a_short_one_kept() -> None:
    long = "word  \n " * 500
    assert _clip(long) == _whole(long, EXCERPT_CHARS)
    assert len(_clip(long)) == EXCERPT_CHARS and _clip(long).endswith("…")
    assert _clip(" a \n b ") == "a b"
