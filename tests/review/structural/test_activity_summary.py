"""A batch's or a line's activity summary reads its events once and says what it said.

``activity_summary`` used to count each kind in a pass of its own; it now counts in one
pass. The summary is published text (batch summaries, story-line summaries), so it is
held to the many-pass version over any mix of events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.graph import EventFact, EventKind, EventOutcome, SourceRef
from proctor.review.structural import activity_summary
from tests.properties import examples


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def many_pass_summary(events: Sequence[EventFact]) -> str:
    """The summary as it was written before the one-pass version (a pass per kind)."""
    runs = [e for e in events if e.kind in ("command", "test_run")]
    parts: list[str] = []
    if runs:
        failed = sum(e.outcome == "failed" for e in runs)
        parts.append(_plural(len(runs), "command") + (f" ({failed} failed)" if failed else ""))
    for kind, noun in (("file_edit", "edited"), ("file_create", "created"), ("file_read", "read")):
        files = {e.entity_ids[0] for e in events if e.kind == kind and e.entity_ids}
        if files:
            parts.append(f"{_plural(len(files), 'file')} {noun}")
    states: list[str] = []
    for event in events:
        if event.kind == "test_run" and event.outcome != "unknown":
            state = "passing" if event.outcome == "ok" else "failing"
            if not states or states[-1] != state:
                states.append(state)
    if states:
        parts.append("tests: " + " → ".join(states))
    for kind, one, many in (
        ("error", "error", "errors"),
        ("commit", "commit", "commits"),
        ("package_install", "package installed", "packages installed"),
        ("url_fetch", "URL fetched", "URLs fetched"),
        ("subagent_run", "sub-agent run", "sub-agent runs"),
        ("task_status", "task update", "task updates"),
    ):
        count = sum(e.kind == kind for e in events)
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    return ", ".join(parts) if parts else "no structural events"


EVENTS = st.builds(
    lambda n, kind, outcome, entities: EventFact(
        event_id=f"e{n}",
        project_id="p",
        kind=kind,
        title="t",
        summary="s",
        occurred_at=None,
        conversation_id="c",
        sources=(SourceRef("tool_call", f"s{n}"),),
        layer="structural",
        entity_ids=tuple(entities),
        outcome=outcome,
    ),
    st.integers(0, 10_000),
    st.sampled_from(get_args(EventKind)),
    st.sampled_from(get_args(EventOutcome)),
    st.lists(st.sampled_from(["f1", "f2", "f3", "t1"]), max_size=3),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(EVENTS, max_size=40))
def test_the_one_pass_summary_says_what_the_many_pass_one_said(
    events: list[EventFact],
) -> None:
    assert activity_summary(events) == many_pass_summary(events)


def test_a_mixed_run_is_summarised_in_the_documented_order() -> None:
    def event(kind: EventKind, outcome: EventOutcome = "unknown", *ids: str) -> EventFact:
        return EventFact("e", "p", kind, "t", "s", None, "c", (), "structural", ids, outcome)

    events = [
        event("test_run", "failed", "t1"),
        event("command", "ok"),
        event("file_edit", "unknown", "f1"),
        event("file_edit", "unknown", "f1"),
        event("test_run", "ok", "t1"),
        event("error", "failed"),
    ]
    assert activity_summary(events) == (
        "3 commands (1 failed), 1 file edited, tests: failing → passing, 1 error"
    )
