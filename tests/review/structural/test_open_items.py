"""Open items: a test or command whose last finished run failed; resolved when it passes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

import pytest

from proctor.graph import EventFact, EventKind, SourceRef
from proctor.review.structural import derive_open_items, extract_structural, open_item_key
from proctor.store import Store
from tests.review.structural.helpers import batch_of, conversation_ids

START = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def run(
    subject: str,
    outcome: Literal["ok", "failed", "unknown"],
    minute: int,
    *,
    kind: EventKind = "test_run",
    label: str | None = None,
) -> EventFact:
    """A run of ``subject`` (its first entity) as the structural layer records it."""
    name = label or subject
    title = {"failed": f"{name} failed (1 failed)", "ok": f"{name} passed"}.get(
        outcome, f"Started {name} (no result recorded)"
    )
    return EventFact(
        event_id=f"{subject}-{minute}",
        project_id="p",
        kind=kind,
        title=title,
        summary=f"{name} {outcome}.",
        occurred_at=START + timedelta(minutes=minute),
        conversation_id="c",
        sources=(SourceRef("tool_call", f"call-{subject}-{minute}", "result_text", 0, 9),),
        layer="structural",
        entity_ids=(subject, f"command-of-{subject}"),
        outcome=outcome,
    )


def keys(events: list[EventFact]) -> tuple[list[str], list[str]]:
    items, resolved = derive_open_items(events)
    return [i.key.removeprefix("failing:") for i in items], [
        k.removeprefix("failing:") for k in resolved
    ]


@pytest.mark.parametrize(
    ("events", "open_", "resolved"),
    [
        ([run("t", "failed", 1)], ["t"], []),
        ([run("t", "failed", 1), run("t", "ok", 2)], [], ["t"]),
        ([run("t", "ok", 1), run("t", "failed", 2)], ["t"], []),
        # A different test or command passing says nothing about the failing one.
        ([run("t", "failed", 1), run("u", "ok", 2)], ["t"], ["u"]),
        ([run("c", "failed", 1, kind="command"), run("d", "ok", 2, kind="command")], ["c"], ["d"]),
        # A run without a recorded result changes nothing.
        ([run("t", "failed", 1), run("t", "unknown", 2)], ["t"], []),
        ([run("t", "ok", 1), run("t", "unknown", 2)], [], ["t"]),
        # Time decides, not the order given (events from several batches).
        ([run("t", "ok", 2), run("t", "failed", 1)], [], ["t"]),
        ([run("t", "failed", 1), run("t", "ok", 2), run("t", "failed", 3)], ["t"], []),
        # Other kinds of events never open or close anything.
        ([run("f", "failed", 1, kind="error"), run("g", "ok", 2, kind="file_edit")], [], []),
    ],
)
def test_the_last_finished_run_of_each_test_or_command_decides(
    events: list[EventFact], open_: list[str], resolved: list[str]
) -> None:
    assert keys(events) == (open_, resolved)


def test_only_the_subject_of_a_run_is_opened_not_the_command_line_behind_it() -> None:
    items, resolved = derive_open_items([run("t", "failed", 1)])
    (item,) = items
    assert item.entity_ids == ("t",)
    assert open_item_key("command-of-t") not in {i.key for i in items} | set(resolved)


def test_an_open_item_cites_the_last_failure_and_says_what_is_still_failing() -> None:
    first, last = run("t", "failed", 1, label="pytest"), run("t", "failed", 5, label="pytest")
    (item,) = derive_open_items([first, last])[0]
    assert item.key == "failing:t"
    assert item.title == "pytest still failing"
    assert item.sources == last.sources
    assert item.layer == "structural"
    assert item.project_id == "p"
    assert "2026-01-01T09:05:00+00:00" in item.detail


def test_the_same_test_run_with_other_flags_is_the_same_open_item(shared_store: Store) -> None:
    # sample_session.json: `python -m pytest tests/` passes, later `python -m pytest tests/ -v`
    # fails: one test (`pytest tests`), whose last run failed.
    (conversation_id,) = [
        c for c in conversation_ids(shared_store) if c.endswith("sample_session.json")
    ]
    facts = extract_structural(batch_of(shared_store, [conversation_id]))
    runs = [e for e in facts.events if e.kind == "test_run"]
    assert [(e.title, e.outcome) for e in runs] == [
        ("pytest tests passed (2 passed)", "ok"),
        ("pytest tests failed", "failed"),
    ]
    assert runs[0].entity_ids[0] == runs[1].entity_ids[0]
    items, resolved = derive_open_items(facts.events)
    assert [i.title for i in items] == ["pytest tests still failing"]
    assert open_item_key(runs[0].entity_ids[0]) not in resolved


def test_a_later_passing_run_with_other_flags_resolves_the_failure(shared_store: Store) -> None:
    # The spotter session runs `mix test --seed 0 2>&1 | tail -30` (fails), then passes it
    # again with other output filters and without the seed: all one test, last run passed.
    (conversation_id,) = [
        c
        for c in conversation_ids(shared_store)
        if c.endswith("ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    ]
    facts = extract_structural(batch_of(shared_store, [conversation_id]))
    runs = [e for e in facts.events if e.kind == "test_run"]
    assert {e.title.split(" passed")[0].split(" failed")[0] for e in runs} == {"mix test"}
    assert "failed" in [e.outcome for e in runs]
    assert runs[-1].outcome == "ok"
    items, resolved = derive_open_items(facts.events)
    assert open_item_key(runs[0].entity_ids[0]) in resolved
    assert not [i for i in items if i.entity_ids == (runs[0].entity_ids[0],)]
