"""A Claude Code message's blocks are read in one pass: the pass that takes the visible
parts also tells whether ``content_problem`` has anything to say, and it is asked only
then. Whatever the content, the warning is the one ``content_problem`` gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources.claude_code._content import assistant_parts, content_problem, user_parts
from tests.properties import examples

_KINDS = st.one_of(
    st.sampled_from(
        [
            "text",
            "tool_result",
            "tool_use",
            "server_tool_use",
            "image",
            "document",
            "thinking",
            "redacted_thinking",
            "web_search_result",
            "Text",
        ]
    ),
    st.none(),
    st.integers(),
    st.lists(st.integers(), max_size=1),
)
_BLOCKS = st.one_of(
    st.fixed_dictionaries(
        {"type": _KINDS},
        optional={
            "text": st.one_of(st.sampled_from(["hi", " ", ""]), st.integers()),
            "source": st.fixed_dictionaries({"type": st.just("url"), "url": st.just("u")}),
        },
    ),
    st.dictionaries(st.sampled_from(["text", "id"]), st.just("x"), max_size=2),
    st.sampled_from(["bare text", " ", 3, None, ["nested"]]),
)
_CONTENT = st.one_of(
    st.lists(_BLOCKS, max_size=5), st.sampled_from(["plain", "", None, 7, {"type": "text"}])
)


@settings(max_examples=examples(600), deadline=None)
@given(content=_CONTENT)
def test_the_parts_pass_tells_when_there_is_a_problem(content: Any) -> None:
    for parts, assistant in ((user_parts, False), (assistant_parts, True)):
        *_, plain = parts(content)
        problem = content_problem(content, assistant=assistant)
        if plain:
            assert problem is None
        # What the reader records: the problem only when the pass says to ask.
        assert (None if plain else content_problem(content, assistant=assistant)) == problem


def test_blocks_nobody_reads_are_told() -> None:
    blocks = [{"type": "text", "text": "hi"}, {"type": "web_search_result", "text": "found"}]
    assert not user_parts(blocks)[2]
    assert not assistant_parts(blocks)[2]
    assert content_problem(blocks, assistant=True) == (
        "message.content[1] holds text but its type is 'web_search_result'"
    )
    assert user_parts([{"type": "thinking", "thinking": "…"}, "bare"])[2]
    assert not assistant_parts(["bare"])[2]
    assert assistant_parts(None)[2] and not assistant_parts(7)[2]
