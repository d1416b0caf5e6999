"""Claude Code order comes from the uuid → parentUuid tree: branches, cycles, compaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.transcript import ConversationBundle, Message
from tests.sources.fixtures.claude_code.records import (
    at,
    envelope,
    progress,
    prompt,
    reply,
    text,
    tool_result,
    tool_use,
    write_session,
)
from tests.sources.helpers import read

SYNTHETIC = "claude-code/claude-code-log-synthetic"


def only_bundle(path: Path) -> ConversationBundle:
    result = read(path)
    assert result.errors() == []
    (bundle,) = result.bundles
    return bundle


def by_id(bundle: ConversationBundle) -> dict[str, Message]:
    return {m.source_id: m for m in bundle.messages}


def raw_uuids(path: Path) -> list[str]:
    return [json.loads(line)["uuid"] for line in path.read_text().splitlines()]


def test_a_fork_keeps_both_branches_and_only_the_newest_is_active(transcripts_dir: Path) -> None:
    bundle = only_bundle(transcripts_dir / SYNTHETIC / "dag_fork.jsonl")
    active = {m.text for m in bundle.messages if m.on_active_branch}
    abandoned = {m.text for m in bundle.messages if not m.on_active_branch}
    assert active == {"Start", "Reply 1", "Middle", "Fork from c", "Forked reply", "End of s3"}
    assert abandoned == {"Reply 2", "Last in s1", "Continue from e", "Continued reply", "End of s2"}
    messages = by_id(bundle)
    assert messages["cc:i"].parent_source_id == "cc:c"
    assert messages["cc:msg:d"].parent_source_id == "cc:c"


def test_messages_come_in_tree_order_with_older_branches_first(transcripts_dir: Path) -> None:
    path = transcripts_dir / SYNTHETIC / "dag_fork.jsonl"
    bundle = only_bundle(path)
    # Depth first from the root; at the fork the 10:03 child's subtree precedes 12:00's.
    expected = ["a", "msg:b", "c", "msg:d", "e", "f", "msg:g", "h", "i", "msg:j", "k"]
    assert [m.source_id for m in bundle.messages] == [f"cc:{s}" for s in expected]


def test_a_rewind_within_a_session_marks_the_first_attempt_inactive(transcripts_dir: Path) -> None:
    bundle = only_bundle(transcripts_dir / SYNTHETIC / "dag_within_fork.jsonl")
    flags = {m.text: m.on_active_branch for m in bundle.messages}
    assert flags == {
        "Hello": True,
        "Hi there": True,
        "Fork point": True,
        "Branch 1 start": False,
        "Branch 1 reply": False,
        "Branch 1 end": False,
        "Branch 2 start": True,
        "Branch 2 reply": True,
    }


@pytest.mark.parametrize("name", ["dag_resume.jsonl", "dag_simple.jsonl"])
def test_a_resumed_or_simple_chain_is_one_active_line_of_parents(
    transcripts_dir: Path, name: str
) -> None:
    path = transcripts_dir / SYNTHETIC / name
    bundle = only_bundle(path)
    assert all(m.on_active_branch for m in bundle.messages)
    parents = [m.parent_source_id for m in bundle.messages]
    assert parents == [None, *[m.source_id for m in bundle.messages[:-1]]]
    assert len(bundle.messages) == len(raw_uuids(path))


@pytest.mark.parametrize(
    "relative",
    [
        "claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
        "claude-code/marot-spotter/tool_heavy.jsonl",
        "claude-code/claude-code-log/real_projects/-experiments-worktrees/"
        "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    ],
)
def test_parallel_tool_results_hanging_off_earlier_lines_are_not_abandoned_branches(
    transcripts_dir: Path, relative: str
) -> None:
    result = read(transcripts_dir / relative)
    for bundle in result.bundles:
        assert all(m.on_active_branch for m in bundle.messages), bundle.conversation_id
        assert all(c.on_active_branch for c in bundle.tool_calls), bundle.conversation_id


def test_a_message_parent_skips_progress_and_attachment_lines(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [
            prompt("u1", None, "Run the tests", 0),
            progress("p1", "u1", 1),
            envelope("attachment", "att1", "p1", 2, attachment={"type": "hook_success"}),
            reply("a1", "att1", "msg_1", [text("Running them now.")], 3),
        ],
    )
    messages = by_id(only_bundle(path))
    assert messages["cc:msg:msg_1"].parent_source_id == "cc:u1"


def test_a_parent_cycle_is_cut_with_a_warning_and_nothing_is_dropped(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "cycle.jsonl",
        [
            prompt("root", None, "First question", 0),
            reply("r1", "root", "msg_r", [text("First answer")], 1),
            prompt("x", "z", "Looped question", 2),
            reply("y", "x", "msg_y", [text("Looped answer")], 3),
            prompt("z", "y", "Looped follow-up", 4),
        ],
    )
    bundle = only_bundle(path)
    assert [m.text for m in bundle.messages] == [
        "First question",
        "First answer",
        "Looped question",
        "Looped answer",
        "Looped follow-up",
    ]
    (warning,) = bundle.issues
    assert (warning.severity, warning.line) == ("warning", 3)
    assert "lines 3, 4, 5 form a parent cycle" in warning.reason
    assert by_id(bundle)["cc:x"].parent_source_id is None


def test_a_record_that_is_its_own_parent_becomes_a_root(tmp_path: Path) -> None:
    path = write_session(tmp_path / "self.jsonl", [prompt("me", "me", "Hello?", 0)])
    bundle = only_bundle(path)
    assert [(m.text, m.parent_source_id) for m in bundle.messages] == [("Hello?", None)]
    assert [i.line for i in bundle.issues] == [1]


def test_an_orphan_sub_agent_file_never_becomes_its_own_parent(transcripts_dir: Path) -> None:
    # claude-code-log's dag_cycle.jsonl: a lone sidechain line whose session is not here.
    bundle = only_bundle(transcripts_dir / SYNTHETIC / "dag_cycle.jsonl")
    assert bundle.conversation.kind == "subagent"
    assert bundle.conversation.parent_conversation_id == (
        "cc:session:7fcff579-39b7-4f93-9179-f25e3a0d9bc9"
    )
    (message,) = bundle.messages
    assert message.parent_source_id is None
    assert bundle.issues == ()


def test_a_dangling_parent_starts_a_new_root_with_a_warning(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "dangling.jsonl",
        [
            prompt("u1", None, "Before the gap", 0),
            reply("a1", "u1", "msg_1", [text("Noted.")], 1),
            prompt("u2", "never-written", "After the gap", 2),
        ],
    )
    bundle = only_bundle(path)
    assert [m.text for m in bundle.messages] == ["Before the gap", "Noted.", "After the gap"]
    assert all(m.on_active_branch for m in bundle.messages)
    assert by_id(bundle)["cc:u2"].parent_source_id is None
    (warning,) = bundle.issues
    assert (warning.severity, warning.line) == ("warning", 3)
    assert "'never-written' is not in this file" in warning.reason


def test_compaction_links_across_the_boundary_and_the_summary_is_derived(tmp_path: Path) -> None:
    boundary = envelope(
        "system",
        "b1",
        None,
        3,
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a1",
        compactMetadata={"trigger": "auto", "preTokens": 150000},
    )
    summary = prompt("s1", "b1", "The user asked for a refactor; done so far: ...", 4)
    summary |= {"isCompactSummary": True, "isVisibleInTranscriptOnly": True}
    path = write_session(
        tmp_path / "compact.jsonl",
        [
            prompt("u1", None, "Refactor the billing module", 0),
            reply("a1", "u1", "msg_1", [text("Refactoring.")], 1),
            boundary,
            summary,
            prompt("u2", "s1", "continue", 5),
        ],
    )
    bundle = only_bundle(path)
    messages = by_id(bundle)
    assert (messages["cc:s1"].kind, messages["cc:s1"].derived) == ("summary", True)
    assert messages["cc:s1"].parent_source_id == "cc:msg:msg_1"
    assert not any(m.derived for m in bundle.messages if m.source_id != "cc:s1")
    (event,) = bundle.task_events
    assert (event.source_id, event.kind) == ("cc:b1", "compaction")
    assert event.attributes == {"trigger": "auto", "preTokens": 150000}


def test_the_real_compaction_summary_is_derived_and_its_model_call_is_a_compaction_conversation(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / "claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    (summary_uuid,) = [r["uuid"] for r in records if r.get("isCompactSummary")]
    (boundary_uuid,) = [r["uuid"] for r in records if r.get("subtype") == "compact_boundary"]
    main, *children = read(path).bundles
    assert [m.source_id for m in main.messages if m.derived] == [f"cc:{summary_uuid}"]
    assert [m.kind for m in main.messages if m.derived] == ["summary"]
    assert [(e.source_id, e.kind) for e in main.task_events] == [
        (f"cc:{boundary_uuid}", "compaction")
    ]
    (compaction,) = [b for b in children if b.conversation.kind == "compaction"]
    assert compaction.conversation.parent_conversation_id == main.conversation_id
    assert compaction.subagent_run is None
    assert compaction.conversation.conversation_id.endswith(":acompact-946d2b")


def test_inverted_timestamps_do_not_reorder_a_chain(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "late.jsonl",
        [
            prompt("u1", None, "one", 9),
            reply("a1", "u1", "msg_1", [text("two")], 2),
            prompt("u2", "a1", "three", 1),
        ],
    )
    assert [m.text for m in only_bundle(path).messages] == ["one", "two", "three"]


def test_missing_or_unreadable_timestamps_are_tolerated_with_one_warning(tmp_path: Path) -> None:
    first = prompt("u1", None, "no time", 0)
    del first["timestamp"]
    second = reply("a1", "u1", "msg_1", [text("bad time")], 0) | {"timestamp": "yesterday"}
    third = prompt("u2", "a1", "epoch time", 0) | {"timestamp": 1_767_225_600_000}
    bundle = only_bundle(write_session(tmp_path / "times.jsonl", [first, second, third]))
    times = [m.created_at for m in bundle.messages]
    assert times[:2] == [None, None]
    assert times[2] is not None and times[2].isoformat() == "2026-01-01T00:00:00+00:00"
    (warning,) = bundle.issues
    assert (warning.line, warning.severity) == (2, "warning")
    assert "'yesterday'" in warning.reason


def test_records_without_a_parent_field_follow_the_record_before_them(
    transcripts_dir: Path,
) -> None:
    bundle = only_bundle(
        transcripts_dir / "claude-code/claude-code-transcripts/sample_session.jsonl"
    )
    parents = [m.parent_source_id for m in bundle.messages]
    assert parents[0] is None
    assert all(p is not None for p in parents[1:])
    assert all(m.on_active_branch for m in bundle.messages)


def test_siblings_without_message_content_do_not_count_as_branches(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "parallel.jsonl",
        [
            prompt("u1", None, "Look at both files", 0),
            reply("a1", "u1", "msg_1", [tool_use("toolu_1", "Read", file_path="a.py")], 1),
            reply("a2", "a1", "msg_1", [tool_use("toolu_2", "Read", file_path="b.py")], 2),
            tool_result("r1", "a1", "toolu_1", "a", 3),
            tool_result("r2", "a2", "toolu_2", "b", 4),
            reply("a3", "r2", "msg_2", [text("Both read.")], 5),
        ],
    )
    bundle = only_bundle(path)
    assert all(m.on_active_branch for m in bundle.messages)
    assert [c.status for c in bundle.tool_calls] == ["ok", "ok"]
    assert by_id(bundle)["cc:msg:msg_2"].parent_source_id == "cc:msg:msg_1"
    assert bundle.messages[0].created_at is not None
    assert bundle.messages[0].created_at.isoformat().startswith(at(0)[:19])
