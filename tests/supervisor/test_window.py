"""The input window (SPEC SUP-3): bounded, addressable, only the target's visible events."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.findings import Evidence, Finding
from proctor.gate import stored_trace
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.supervisor import MemoryNote, Window, WindowLimits, build_window
from proctor.transcript import Message
from tests.supervisor.builders import Chat, in_memory, stored

OPENAI_KEY = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9"


def entries(window: Window) -> list[dict[str, Any]]:
    """The data lines decoded."""
    return [json.loads(line) for line in window.lines]


def of_type(window: Window, kind: str) -> list[dict[str, Any]]:
    """Decoded lines of one type."""
    return [e for e in entries(window) if e["type"] == kind]


def sent_text(window: Window) -> str:
    """Everything the model would read of the window."""
    return "\n".join(window.lines)


def long_chat(messages: int, *, size: int = 40, calls_every: int = 0) -> Chat:
    chat = Chat()
    for i in range(messages):
        if i % 2 == 0:
            chat.user(f"request {i} " + "u" * size)
        else:
            chat.assistant(f"reply {i} " + "a" * size)
            if calls_every and i % calls_every == 1:
                chat.tool("Bash", {"command": f"pytest -k case{i}"}, f"{i} passed")
    return chat


def test_a_window_shows_the_last_twelve_messages_and_the_calls_they_issued() -> None:
    chat = long_chat(30, calls_every=2)
    transcript = in_memory(chat)
    window = build_window(transcript)
    shown = [i.source_id for i in window.items if i.source_type == "message"]
    assert shown == [m.source_id for m in transcript.messages[-12:]]
    calls = [i.source_id for i in window.items if i.source_type == "tool_call"]
    issued_by_shown = [c.source_id for c in transcript.tool_calls if c.message_source_id in shown]
    assert calls == issued_by_shown and calls
    assert window.dropped.messages == 18
    assert window.dropped.tool_calls == len(transcript.tool_calls) - len(calls)
    header = of_type(window, "target")[0]
    assert (header["messages_in_target"], header["messages_shown"]) == (30, 12)


def test_the_character_budget_drops_the_oldest_messages_first() -> None:
    chat = Chat()
    for i in range(12):
        chat.user(f"long message {i} " + "x" * 5_000)
    window = build_window(in_memory(chat))
    assert window.chars <= 24_000
    assert window.chars == sum(len(line) + 1 for line in window.lines)
    shown = [e["text"].split(" x")[0] for e in of_type(window, "message")]
    assert shown == [f"long message {i}" for i in range(12 - len(shown), 12)]
    assert 0 < window.dropped.messages < 12


def test_a_single_huge_message_is_clipped_with_a_marker_and_keeps_head_and_tail() -> None:
    chat = Chat()
    chat.user("please fix it")
    chat.assistant("HEAD-START " + "y" * 100_000 + " TAIL-END")
    window = build_window(in_memory(chat))
    text = of_type(window, "message")[-1]["text"]
    assert window.chars <= 24_000
    assert text.startswith("HEAD-START") and text.endswith("TAIL-END")
    assert "characters omitted" in text
    assert len(text) <= WindowLimits().message_chars
    assert window.dropped.clipped_chars > 90_000


def test_the_newest_message_is_shrunk_to_fit_when_nothing_else_would() -> None:
    chat = Chat()
    chat.assistant("z" * 50_000)
    limits = WindowLimits(chars=4_000, message_chars=50_000, goal_chars=1_000)
    window = build_window(in_memory(chat), limits=limits, goal="g" * 900)
    assert window.chars <= 4_000
    assert "characters omitted" in of_type(window, "message")[0]["text"]


def test_a_huge_tool_output_is_shown_as_a_bounded_summary_with_its_full_length() -> None:
    chat = Chat()
    chat.user("run the tests")
    chat.assistant("running")
    chat.tool(
        "Bash", {"command": "pytest", "env": "q" * 5_000}, "o" * 60_000 + "3 failed", exit_code=1
    )
    window = build_window(in_memory(chat))
    call = of_type(window, "tool_call")[0]
    assert call["name"] == "Bash" and call["exit_code"] == 1
    assert len(call["output"]) <= WindowLimits().tool_output_chars
    assert call["output"].endswith("3 failed")
    assert call["output_chars"] == 60_008
    assert len(call["arguments"]) <= WindowLimits().argument_chars
    assert window.dropped.clipped_outputs == 1


def test_a_task_window_holds_the_goal_and_the_last_twenty_key_events_of_that_task() -> None:
    chat = Chat()
    chat.user("before the task: BEFORE-TASK")
    chat.start_task("task-a", "Rounding", goal="round half up everywhere")
    chat.user("inside the task")
    for i in range(30):
        chat.event("status", f"task-a step {i}", task_id="task-a")
        chat.event("status", f"task-b step {i}", task_id="task-b")
    chat.assistant("done with rounding")
    chat.end_task("task-a")
    chat.user("after the task: AFTER-TASK")
    transcript = in_memory(chat)
    window = build_window(transcript, task_id="task-a")
    assert (window.target_type, window.target_id) == ("task", "task-a")
    assert window.goal == "round half up everywhere"
    assert of_type(window, "goal")[0]["text"] == "round half up everywhere"
    events = of_type(window, "task_event")
    assert [e["text"] for e in events] == [f"task-a step {i}" for i in range(10, 30)]
    assert window.dropped.task_events == 10
    text = sent_text(window)
    assert "task-b" not in text and "BEFORE-TASK" not in text and "AFTER-TASK" not in text
    assert [e["text"] for e in of_type(window, "message")] == [
        "inside the task",
        "done with rounding",
    ]
    first_event = next(i for i in window.items if i.source_type == "task_event")
    assert window.evidence_map[first_event.window_id].source_type == "task_event"


def test_an_unknown_task_is_refused() -> None:
    with pytest.raises(ValueError, match="not in conversation"):
        build_window(in_memory(long_chat(2)), task_id="no-such-task")


def _finding(conversation_id: str, n: int, **changes: Any) -> Finding:
    values: dict[str, Any] = {
        "key": f"k{n}",
        "conversation_id": conversation_id,
        "rule": "claims.unverified",
        "rule_version": 1,
        "action": "warn",
        "category": "evidence_gap",
        "severity": "low",
        "title": f"finding number {n}",
        "content": f"FULL-CONTENT-{n} " * 50,
        "evidence": [Evidence(source_type="message", source_id=f"{conversation_id}:m1")],
    }
    values.update(changes)
    return Finding(**values)


def test_open_findings_are_summarised_bounded_most_severe_first_and_only_this_conversation() -> (
    None
):
    transcript = in_memory(long_chat(4))
    conversation_id = transcript.summary.conversation_id
    findings = [_finding(conversation_id, n) for n in range(14)]
    findings.append(_finding(conversation_id, 90, severity="high", title="the severe one"))
    findings.append(_finding(conversation_id, 91, status="resolved", title="RESOLVED-ONE"))
    findings.append(_finding("other:conv", 92, title="OTHER-CONVERSATION"))
    window = build_window(transcript, open_findings=findings)
    summaries = of_type(window, "open_finding")
    assert len(summaries) == 10 and window.dropped.findings == 5
    assert summaries[0]["title"] == "the severe one"
    assert summaries[0]["evidence"] == ["m1"] and summaries[0]["evidence_elsewhere"] is False
    assert set(summaries[0]) == {
        "type",
        "rule",
        "severity",
        "action",
        "title",
        "evidence",
        "evidence_elsewhere",
    }
    text = sent_text(window)
    assert "FULL-CONTENT" not in text
    assert "RESOLVED-ONE" not in text and "OTHER-CONVERSATION" not in text
    first = window.open_findings[0]
    assert (first.title, first.severity, first.evidence) == ("the severe one", "high", ("m1",))


def test_nothing_from_another_conversation_or_a_subagent_appears(store: SqlStore) -> None:
    main = long_chat(6)
    other = Chat("sup:other")
    other.user("OTHER-CONVERSATION-TEXT")
    child = Chat("sup:child")
    child.user("SUBAGENT-TEXT")
    stored(store, other)
    transcript = stored(store, main)
    child_bundle = child.bundle()
    child_bundle = dataclasses.replace(
        child_bundle,
        conversation=dataclasses.replace(
            child_bundle.conversation, kind="subagent", parent_conversation_id="sup:conv-1"
        ),
    )
    store.write_conversation(prepare_bundle(child_bundle))
    transcript = store.transcript("sup:conv-1")
    assert transcript.children
    text = sent_text(build_window(transcript))
    assert "OTHER-CONVERSATION-TEXT" not in text and "SUBAGENT-TEXT" not in text


def test_secrets_hidden_reasoning_and_metadata_never_reach_the_window(store: SqlStore) -> None:
    chat = Chat()
    chat.user(f"my key is {OPENAI_KEY}")
    chat.assistant("<thinking>PRIVATE-PLAN to fool the user</thinking>Done.")
    chat.tool("Bash", {"command": "env"}, f"OPENAI_API_KEY={OPENAI_KEY}")
    chat.calls[-1] = dataclasses.replace(chat.calls[-1], attributes={"note": "ATTRIBUTE-VALUE"})
    text = sent_text(build_window(stored(store, chat)))
    assert OPENAI_KEY not in text and "[REDACTED:" in text
    assert "PRIVATE-PLAN" not in text and "ATTRIBUTE-VALUE" not in text


def test_a_secret_that_slipped_past_import_is_redacted_again() -> None:
    transcript = in_memory(long_chat(2))
    leaked = Message("sup:conv-1:leak", "assistant", "reply", f"use {OPENAI_KEY} here")
    window = build_window(dataclasses.replace(transcript, messages=(*transcript.messages, leaked)))
    assert OPENAI_KEY not in sent_text(window)
    assert window.redactions == 1


def test_memories_are_shown_labelled_as_memory() -> None:
    notes = [MemoryNote(f"mem-{i}", f"the user prefers tabs {i}") for i in range(7)]
    window = build_window(in_memory(long_chat(2)), memories=notes)
    shown = of_type(window, "memory")
    assert [m["memory_id"] for m in shown] == [f"mem-{i}" for i in range(5)]
    assert window.memories == tuple(notes[:5]) and window.dropped.memories == 2


def test_window_ids_stay_the_same_while_the_conversation_grows() -> None:
    chat = long_chat(6, calls_every=2)
    before = build_window(in_memory(chat))
    for i in range(4):
        chat.user(f"more {i}")
    after = build_window(in_memory(chat))
    by_source = {i.source_id: i.window_id for i in after.items}
    shared = [i for i in before.items if i.source_id in by_source]
    assert shared and all(by_source[i.source_id] == i.window_id for i in shared)


def test_every_window_id_maps_to_evidence_at_its_stored_source() -> None:
    chat = long_chat(6, calls_every=2)
    window = build_window(in_memory(chat))
    assert set(window.evidence_map) == {"target", *(i.window_id for i in window.items)}
    for item in window.items:
        evidence = window.evidence_map[item.window_id]
        assert (evidence.source_type, evidence.source_id) == (item.source_type, item.source_id)
    target = window.evidence_map["target"]
    assert (target.source_type, target.source_id) == ("conversation", "sup:conv-1")


def test_last_event_index_is_the_newest_trace_event(store: SqlStore) -> None:
    transcript = stored(store, long_chat(7, calls_every=2))
    window = build_window(transcript)
    assert window.last_event_index == stored_trace(transcript).events[-1].index
    assert build_window(in_memory(Chat())).last_event_index == -1


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 30_000), min_size=1, max_size=40),
    outputs=st.lists(st.integers(0, 70_000), max_size=20),
    findings=st.integers(0, 15),
    chars=st.integers(4_000, 30_000),
)
def test_no_window_exceeds_its_character_budget(
    sizes: list[int], outputs: list[int], findings: int, chars: int
) -> None:
    chat = Chat()
    for n, size in enumerate(sizes):
        chat.assistant(f"<{n}>" + "w\n" * (size // 2))
        if n < len(outputs):
            chat.tool("Read", {"path": "a" * (outputs[n] // 10)}, '"<>"' * (outputs[n] // 4))
    transcript = in_memory(chat)
    open_findings = [_finding("sup:conv-1", n, title="t" * 250) for n in range(findings)]
    limits = WindowLimits(chars=chars, goal_chars=min(2_000, chars // 4))
    window = build_window(
        transcript, limits=limits, open_findings=open_findings, goal="goal " * 1_000
    )
    assert window.chars <= chars
    # What is shown is always the newest events, with nothing missing in between.
    newest = [e.source_id for e in stored_trace(transcript).events if e.kind != "result"]
    shown = [i.source_id for i in window.items]
    assert shown and shown == newest[len(newest) - len(shown) :]


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        ({"chars": 3_999}, "at least 4,000"),
        ({"chars": 8_000, "goal_chars": 2_001}, "quarter"),
        ({"messages": 0}, "messages must be at least 1"),
    ],
)
def test_limits_that_cannot_hold_a_useful_window_are_refused(
    limits: dict[str, int], reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        WindowLimits(**limits)
