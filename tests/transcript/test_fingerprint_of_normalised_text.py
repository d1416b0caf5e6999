"""A prepared source's text is already in its normalised form: its fingerprint, told so
(``normalised=True``), skips the second normalisation and is the same hash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.transcript import (
    Message,
    TaskEvent,
    ToolCall,
    message_fingerprint,
    normalise_text,
    task_event_fingerprint,
    tool_call_fingerprint,
)
from tests.properties import examples

_TEXTS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["cafe\u0301  ", "e\u0301\n", "plain", " \t", "\u212b", "x\u0301\u0301 "]),
)


@settings(max_examples=examples(300), deadline=None)
@given(text=_TEXTS)
def test_the_hash_of_a_normalised_text_is_the_same(text: str) -> None:
    normal = normalise_text(text)
    message = Message(source_id="m", role="user", kind="prompt", text=text)
    prepared = Message(source_id="m", role="user", kind="prompt", text=normal)
    assert message_fingerprint(prepared, "c", normalised=True) == message_fingerprint(message, "c")
    call = ToolCall(source_id="t", name="Bash", arguments={}, result_text=text)
    done = ToolCall(source_id="t", name="Bash", arguments={}, result_text=normal)
    assert tool_call_fingerprint(done, "c", normalised=True) == tool_call_fingerprint(call, "c")
    event = TaskEvent(source_id="e", kind="note", text=text)
    told = TaskEvent(source_id="e", kind="note", text=normal)
    assert task_event_fingerprint(told, "c", normalised=True) == task_event_fingerprint(event, "c")


def test_a_text_not_normalised_is_hashed_as_given_when_told_it_is() -> None:
    """``normalised=True`` is a promise about the text, not a check of it."""
    message = Message(source_id="m", role="user", kind="prompt", text="cafe\u0301  ")
    assert message_fingerprint(message, "c", normalised=True) != message_fingerprint(message, "c")
