"""Merge calls (SPEC REV-2, REV-9): story lines, sub-threads, experiences, checked refs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from proctor.graph import BatchFacts, EventFact, SourceRef, StoryLineCandidate
from proctor.review.semantic import MERGE_KEY_PREFIX, SemanticBatchError, SemanticReviewer
from proctor.testing.scripted_model import ScriptedModelServer
from tests.review.semantic.builders import CONVERSATION, PROJECT, T0, data_entries
from tests.supervisor.scripted import caller_for

pytestmark = pytest.mark.anyio

LINE_ID = "33333333-3333-4333-8333-333333333333"
LEAVES = [
    BatchFacts(summary="Chose SQLite for the cache.", change_digest="Cache backend decided."),
    BatchFacts(),
    BatchFacts(summary="Fixed the eviction test.", change_digest="Tests green."),
]


def event(n: int, kind: str = "decision") -> EventFact:
    return EventFact(
        event_id=f"event-{n}",
        project_id=PROJECT,
        kind=kind,  # type: ignore[arg-type]
        title=f"Event {n}",
        summary="",
        occurred_at=T0 + timedelta(minutes=n),
        conversation_id=CONVERSATION,
        sources=(SourceRef("message", f"m{n}"),),
        layer="semantic",
        entity_ids=(f"entity-{n}",),
    )


EVENTS = [event(1), event(2, "test_run"), event(3, "milestone")]
LINES = [StoryLineCandidate(LINE_ID, PROJECT, "Cache work", "The cache backend", None, T0)]


def line(key: str, refs: list[str], **changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "key": key,
        "storyLineRef": None,
        "parentKey": None,
        "title": f"Line {key}",
        "summary": "",
        "eventRefs": refs,
    }
    value.update(changes)
    return value


def merge_answer(*lines: dict[str, Any], **changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "summary": "The cache now runs on SQLite and its tests pass.",
        "changeDigest": "Cache on SQLite.",
        "storyLines": list(lines),
        "experiences": [],
        "openItems": [],
    }
    value.update(changes)
    return value


async def merged(*answers: Any) -> Any:
    with ScriptedModelServer(list(answers)) as server:
        result = await SemanticReviewer(caller_for(server)).merge(LEAVES, EVENTS, LINES, "all")
        return result, server.requests


async def test_merge_maps_story_line_refs_sub_threads_and_experiences() -> None:
    answer = merge_answer(
        line("cache", ["ev1", "ev3"], storyLineRef="line_1"),
        line("eviction", ["ev2", "ev3", "ev2"], parentKey="cache"),
        experiences=[{"title": "Run the tests", "lesson": "Check eviction.", "eventRefs": ["ev2"]}],
        openItems=[{"title": "Benchmark", "detail": "Not measured yet.", "eventRefs": ["ev3"]}],
    )
    result, [request] = await merged(answer)

    cache, eviction = result.story_lines
    assert (cache.key, cache.story_line_id, cache.parent_key) == ("merge:cache", LINE_ID, None)
    assert cache.event_ids == ("event-1", "event-3") and cache.must_exist
    assert (eviction.key, eviction.story_line_id) == ("merge:eviction", None)
    assert eviction.parent_key == MERGE_KEY_PREFIX + "cache"
    assert eviction.event_ids == ("event-2", "event-3")
    [experience] = result.experiences
    assert experience.event_ids == ("event-2",)
    [item] = result.open_items
    assert item.sources == (SourceRef("message", "m3"),)
    assert (item.project_id, item.entity_ids, item.layer) == (PROJECT, ("entity-3",), "semantic")
    assert result.summary.startswith("The cache now runs")
    assert (result.calls, result.input_tokens) == (1, 100)

    entries = data_entries(request)
    assert [e["id"] for e in entries if e["type"] == "leaf"] == ["b1", "b2"]  # empty leaf skipped
    assert [e["id"] for e in entries if e["type"] == "event"] == ["ev1", "ev2", "ev3"]
    assert [e["id"] for e in entries if e["type"] == "story_line"] == ["line_1"]


async def test_a_merge_may_omit_its_arrays() -> None:
    result, _ = await merged({"summary": "Short review.", "changeDigest": "Nothing big."})
    assert (result.story_lines, result.experiences, result.open_items) == ((), (), ())
    assert result.summary == "Short review."


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        pytest.param(
            merge_answer(line("a", ["ev1"], storyLineRef="line_9")),
            "'line_9' was not offered",
            id="unknown-line",
        ),
        pytest.param(
            merge_answer(line("a", ["ev1"], storyLineRef=LINE_ID)),
            "storyLineRef",
            id="uuid-as-line",
        ),
        pytest.param(
            merge_answer(line("a", ["ev9"])), "'ev9' is not an offered event", id="unknown-event"
        ),
        pytest.param(
            merge_answer(
                line("a", ["ev1"], storyLineRef="line_1"), line("b", ["ev2"], storyLineRef="line_1")
            ),
            "line_1 is already continued by storyLines.0",
            id="duplicate-line",
        ),
        pytest.param(
            merge_answer(line("a", ["ev1"], parentKey="line_1")),
            "'line_1' is not the key of another line",
            id="parent-outside-answer",
        ),
        pytest.param(
            merge_answer(line("a", ["ev1"], parentKey="b"), line("b", ["ev2"], parentKey="a")),
            "form a cycle",
            id="cycle",
        ),
        pytest.param(
            merge_answer(line("a", ["ev1"], parentKey="a")), "its own sub-thread", id="self-parent"
        ),
        pytest.param(
            merge_answer(experiences=[{"title": "t", "lesson": "l", "eventRefs": ["ev7"]}]),
            "experiences.0.eventRefs",
            id="experience-event",
        ),
        pytest.param(
            merge_answer(line("a", ["ev1"]), line("a", ["ev2"])),
            "is used by another line",
            id="same-key",
        ),
        pytest.param({**merge_answer(), "mood": "good"}, "Extra inputs", id="unknown-field"),
    ],
)
async def test_an_invalid_merge_gets_one_repair_and_then_fails(answer: Any, error: str) -> None:
    with pytest.raises(SemanticBatchError) as failed:
        await merged(answer, answer)
    assert (failed.value.reason, failed.value.batch_no, failed.value.calls) == (
        "invalid_answer",
        None,
        2,
    )
    assert any(error in e for e in failed.value.errors), failed.value.errors


async def test_a_merge_with_nothing_to_merge_makes_no_call() -> None:
    with ScriptedModelServer() as server:
        result = await SemanticReviewer(caller_for(server)).merge([BatchFacts()], [], LINES, "all")
        assert server.requests == []
    assert result.calls == 0
