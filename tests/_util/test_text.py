"""``one_line`` flattens and shortens exactly as the helpers it replaced did."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from proctor._util.text import one_line


def _plain(text: str, limit: int, *, trim: bool = False) -> str:
    """The definition every former copy spelled out: collapse, then cut with ``…``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    kept = flat[: limit - 1]
    return (kept.rstrip() if trim else kept) + "…"


_BLANKY = st.text(alphabet=st.sampled_from("ab \n\t\u00a0\u2003xyz"), max_size=400)


@given(text=st.one_of(_BLANKY, st.text(max_size=400)), limit=st.integers(1, 90), trim=st.booleans())
@example(text=" " * 500 + "word", limit=10, trim=False)
@example(text="a" * 39 + " " * 200 + "b", limit=10, trim=False)
@example(text="abcd efgh", limit=6, trim=True)
def test_one_line_is_the_collapsed_text_cut_with_an_ellipsis(
    text: str, limit: int, trim: bool
) -> None:
    assert one_line(text, limit, trim=trim) == _plain(text, limit, trim=trim)


@given(
    text=_BLANKY,
    limit=st.integers(1, 90),
    start=st.integers(0, 420),
    length=st.integers(0, 420),
)
def test_a_range_of_the_text_is_flattened_as_its_slice_would_be(
    text: str, limit: int, start: int, length: int
) -> None:
    end = start + length
    assert one_line(text, limit, start=start, end=end) == _plain(text[start:end], limit)


def test_a_long_first_word_is_cut_inside_it_not_dropped() -> None:
    assert one_line("Supercalifragilistic and more", 10) == "Supercali…"
    assert one_line("  several\n\n lines\tof   text ", 80) == "several lines of text"


def test_trim_drops_the_space_the_cut_leaves_before_the_ellipsis() -> None:
    assert one_line("abcd efgh", 6) == "abcd …"
    assert one_line("abcd efgh", 6, trim=True) == "abcd…"
