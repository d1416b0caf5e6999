"""Loop report keys: two steps in the window share a signature exactly when they are the
same action with the same result (``Step.same_as``), although results are masked only when
one action gave different texts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules._trace import Event
from proctor.rules.builtin._loop_track import WINDOW, LoopTracker, Step
from proctor.transcript import Message, ToolCall
from tests.properties import examples

# Texts that are equal, equal once masked (durations, pids), or different.
_RESULTS = ["ok", "took 5ms", "took 7ms", "pid 12 done", "pid 99 done", "2 failed", "1 failed", ""]
_STEP = st.tuples(
    st.sampled_from(["Bash", "Bash", "Bash", "Read"]),  # mostly one action: long-lived loops
    st.sampled_from(["a", "a", "b"]),
    st.sampled_from(_RESULTS),
    st.booleans(),  # failed
    st.integers(0, 40),  # now and then a user prompt first
)


def _events(steps: list[tuple[str, str, str, bool, int]]) -> list[Event]:
    events: list[Event] = []
    for number, (name, argument, result, failed, prompt) in enumerate(steps):
        if prompt == 0:
            message = Message(source_id=f"m{number}", role="user", kind="prompt", text="again")
            events.append(Event("message", len(events), message=message))
        call = ToolCall(
            source_id=f"c{number}",
            name=name,
            arguments={"command" if name == "Bash" else "file_path": argument},
            result_text=result,
            status="error" if failed else "ok",
        )
        events.append(Event("call", len(events), call=call))
        events.append(Event("result", len(events), call=call))
    return events


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_STEP, min_size=WINDOW, max_size=4 * WINDOW))
def test_signatures_are_equal_exactly_for_the_same_steps_in_the_window(
    steps: list[tuple[str, str, str, bool, int]],
) -> None:
    tracker = LoopTracker()
    seen: dict[int, tuple[Step, tuple[str, int]]] = {}  # a step's signature never changes
    for event in _events(steps):
        step = tracker.advance(event)
        if step is None:
            continue
        window = list(tracker.steps)
        for mine in window:
            signature = tracker.signature(mine)
            assert seen.setdefault(id(mine), (mine, signature))[1] == signature
            for theirs in window:
                same = mine.same_as(theirs)
                assert (tracker.signature(theirs) == signature) == same, (mine, theirs)
