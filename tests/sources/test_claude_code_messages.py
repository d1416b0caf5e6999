"""Claude Code messages, tool calls, usage and run events, checked against the raw lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proctor.transcript import ConversationBundle
from tests.sources.fixtures.claude_code.records import (
    envelope,
    prompt,
    reply,
    text,
    thinking,
    tool_result,
    tool_use,
    write_session,
)
from tests.sources.helpers import read

CC = "claude-code"
MAROT = f"{CC}/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main_bundle(path: Path) -> ConversationBundle:
    result = read(path)
    assert result.errors() == []
    return result.bundles[0]


def test_usage_is_counted_once_per_api_response_not_per_line(transcripts_dir: Path) -> None:
    path = transcripts_dir / MAROT
    per_response: dict[str, int] = {}
    per_line_total = 0
    for record in lines(path):
        if record["type"] == "assistant":
            output = record["message"]["usage"]["output_tokens"]
            per_line_total += output
            message_id = record["message"]["id"]
            per_response[message_id] = max(per_response.get(message_id, 0), output)
    bundle = main_bundle(path)
    counted = {m.source_id.removeprefix("cc:msg:"): m.usage for m in bundle.messages if m.usage}
    assert sum(u.output_tokens for u in counted.values()) == sum(
        per_response[message_id] for message_id in counted
    )
    assert sum(u.output_tokens for u in counted.values()) < per_line_total
    split = [m for m, n in _lines_per_response(path).items() if n > 1 and m in counted]
    assert len(split) > 100


def _lines_per_response(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in lines(path):
        if record["type"] == "assistant":
            counts[record["message"]["id"]] = counts.get(record["message"]["id"], 0) + 1
    return counts


def test_cache_tokens_map_to_cache_read_and_cache_write(tmp_path: Path) -> None:
    first = reply(
        "a1", "u1", "msg_1", [thinking("Let me plan this carefully first.")], 1, output_tokens=2
    )
    second = reply("a2", "a1", "msg_1", [text("Done.")], 2, output_tokens=40)
    path = write_session(tmp_path / "s.jsonl", [prompt("u1", None, "Go", 0), first, second])
    (_, answer) = main_bundle(path).messages
    assert answer.usage is not None
    assert (
        answer.usage.output_tokens,
        answer.usage.cache_read_tokens,
        answer.usage.cache_write_tokens,
    ) == (
        40,
        1000,
        100,
    )
    assert answer.text == "Done."
    assert answer.model == "claude-opus-4-6"


def test_split_lines_of_one_response_become_one_message_with_its_visible_text(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / f"{CC}/marot-spotter/short.jsonl"
    (reply_message,) = [m for m in main_bundle(path).messages if m.role == "assistant"]
    texts = [
        b["text"].strip()
        for r in lines(path)
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "text" and b["text"].strip()
    ]
    assert reply_message.text == "\n\n".join(texts)
    assert reply_message.source_id == "cc:msg:msg_01MKH1ccEGrZGNPvu8pYiiQa"


def test_user_turns_are_classified_as_prompt_injected_notice_or_summary(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / f"{CC}/marot-spotter/tool_heavy.jsonl"
    users = [m for m in main_bundle(path).messages if m.role == "user"]
    expected = [
        ("prompt", "start phoenix in background"),
        ("notice", "[Request interrupted by user]"),
        ("injected", "<local-command-caveat>"),
        ("injected", "<command-name>/mcp"),
        ("injected", "<local-command-stdout>Reconnected"),
        ("prompt", "scrolling back in xterm.js"),
        ("notice", "[Request interrupted by user]"),
    ]
    assert [m.kind for m in users] == [kind for kind, _ in expected]
    assert all(m.text.startswith(start) for m, (_, start) in zip(users, expected, strict=True))
    assert not any(m.derived for m in users)


def test_tool_results_complete_their_calls_and_errors_are_unwrapped(transcripts_dir: Path) -> None:
    path = (
        transcripts_dir
        / f"{CC}/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/b25638d7-b104-4f06-a797-70ac33d069ed.jsonl"
    )
    results = {
        b["tool_use_id"]: b
        for r in lines(path)
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
        if b.get("type") == "tool_result"
    }
    bundle = main_bundle(path)
    assert {c.call_id for c in bundle.tool_calls} == set(results)
    for call in bundle.tool_calls:
        raw = results[call.call_id]
        assert call.status == ("error" if raw.get("is_error") else "ok")
        assert call.completed_at is not None and call.created_at is not None
        assert call.message_source_id in {m.source_id for m in bundle.messages}
    (failed,) = [c for c in bundle.tool_calls if c.status == "error"]
    assert failed.result_text == "File has not been read yet. Read it first before writing to it."


def test_shell_calls_carry_the_exit_code_the_result_reports(transcripts_dir: Path) -> None:
    bundle = main_bundle(transcripts_dir / f"{CC}/claude-code-transcripts/sample_session.json")
    shell = {c.call_id: (c.status, c.exit_code) for c in bundle.tool_calls if c.name == "Bash"}
    assert shell["toolu_bash_004"] == ("error", 1)
    assert {v for k, v in shell.items() if k != "toolu_bash_004"} == {("ok", 0)}
    assert {c.exit_code for c in bundle.tool_calls if c.name != "Bash"} == {None}


def test_rejected_and_interrupted_calls_get_their_own_status(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [
            prompt("u1", None, "Clean up", 0),
            reply("a1", "u1", "msg_1", [tool_use("toolu_rm", "Bash", command="rm -rf /tmp/x")], 1),
            reply("a2", "a1", "msg_1", [tool_use("toolu_ls", "Bash", command="ls")], 2),
            reply("a3", "a2", "msg_1", [tool_use("toolu_cat", "Read", file_path="x")], 3),
            tool_result(
                "r1",
                "a1",
                "toolu_rm",
                "The user doesn't want to proceed with this tool use. The tool use was rejected.",
                4,
                is_error=True,
            ),
            tool_result(
                "r2",
                "a2",
                "toolu_ls",
                "[Request interrupted by user for tool use]",
                5,
                is_error=True,
            ),
        ],
    )
    calls = {c.call_id: c for c in main_bundle(path).tool_calls}
    assert [calls[i].status for i in ("toolu_rm", "toolu_ls", "toolu_cat")] == [
        "rejected",
        "interrupted",
        "pending",
    ]
    assert calls["toolu_cat"].result_text is None


def test_a_real_rejection_marks_the_calls_rejected_and_the_interruption_a_notice(
    transcripts_dir: Path,
) -> None:
    bundle = main_bundle(transcripts_dir / f"{CC}/marot-spotter/short.jsonl")
    assert [c.status for c in bundle.tool_calls] == ["rejected", "rejected"]
    assert [m.kind for m in bundle.messages] == ["prompt", "reply", "notice"]


def test_a_call_without_an_id_is_paired_through_the_line_it_came_from(
    transcripts_dir: Path,
) -> None:
    bundle = main_bundle(transcripts_dir / f"{CC}/agent-sessions/large.jsonl")
    (call,) = bundle.tool_calls
    assert (call.source_id, call.status, call.result_text) == ("cc:tool:a1:2", "ok", "ok")
    assert call.attributes == {"stdoutChars": 18, "stderrChars": 0}


def test_tool_metadata_keeps_small_facts_and_never_file_contents(transcripts_dir: Path) -> None:
    path = (
        transcripts_dir
        / f"{CC}/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/b25638d7-b104-4f06-a797-70ac33d069ed.jsonl"
    )
    bundle = main_bundle(path)
    for call in bundle.tool_calls:
        for key, value in call.attributes.items():
            assert key not in ("originalFile", "structuredPatch", "content", "file", "oldTodos")
            assert isinstance(value, bool | int | float | str)
            assert not isinstance(value, str) or len(value) <= 300
    assert any("filePath" in c.attributes for c in bundle.tool_calls)


def test_todo_write_items_become_tasks_with_their_last_status(transcripts_dir: Path) -> None:
    path = (
        transcripts_dir
        / f"{CC}/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/b25638d7-b104-4f06-a797-70ac33d069ed.jsonl"
    )
    final: dict[str, str] = {}
    for record in lines(path):
        if record["type"] == "assistant":
            for block in record["message"]["content"]:
                if block["type"] == "tool_use" and block["name"] == "TodoWrite":
                    for item in block["input"]["todos"]:
                        final[item["content"]] = item["status"]
    bundle = main_bundle(path)
    assert {t.title: t.status for t in bundle.tasks} == final
    assert all(t.completed_at is not None for t in bundle.tasks if t.status == "completed")
    statuses = [e for e in bundle.task_events if e.kind == "status"]
    assert statuses and all(e.task_id in {t.task_id for t in bundle.tasks} for e in statuses)


def test_task_create_and_update_build_the_task_board(transcripts_dir: Path) -> None:
    path = (
        transcripts_dir
        / f"{CC}/claude-code-log/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    )
    created = {
        r["toolUseResult"]["task"]["id"]: r["toolUseResult"]["task"]["subject"]
        for r in lines(path)
        if isinstance(r.get("toolUseResult"), dict) and "task" in r["toolUseResult"]
    }
    bundle = main_bundle(path)
    tasks = {t.task_id.rsplit(":", 1)[-1]: t for t in bundle.tasks}
    assert {k: t.title for k, t in tasks.items()} == created
    assert {t.status for t in tasks.values()} == {"completed"}
    assert tasks["1"].attributes == {"owner": "alice"}


def test_hook_errors_and_system_notices_become_run_events(transcripts_dir: Path) -> None:
    folder = transcripts_dir / f"{CC}/claude-code-log-synthetic"
    hooks = main_bundle(folder / "hook_attachments.jsonl")
    assert [(e.kind, e.text) for e in hooks.task_events] == [
        ("hook_blocking_error", "ruff check failed"),
        ("hook_non_blocking_error", "Failed with non-blocking status code"),
    ]
    assert hooks.task_events[0].attributes["command"] == "uv run ruff check"
    (away,) = read(folder / "away_summary.jsonl").bundles[0].task_events
    assert away.kind == "away_summary" and away.text.startswith("We're adding a project-level")
    (switch,) = read(folder / "system_model_change.jsonl").bundles[0].task_events
    assert (switch.kind, switch.text) == (
        "warning",
        "Claude Opus 4 limit reached, now using Sonnet 4",
    )


def test_an_api_error_reply_is_a_notice(tmp_path: Path) -> None:
    error = reply("a1", "u1", "msg_err", [text("API Error: 529 Overloaded")], 1) | {
        "isApiErrorMessage": True
    }
    path = write_session(tmp_path / "s.jsonl", [prompt("u1", None, "Hi", 0), error])
    assert [m.kind for m in main_bundle(path).messages] == ["prompt", "notice"]


def test_a_pasted_screenshot_becomes_a_short_placeholder(transcripts_dir: Path) -> None:
    path = transcripts_dir / f"{CC}/claude-code-log/debug_image_message.jsonl"
    (message,) = read(path).bundles[0].messages
    assert message.text.count("[image: image/png, ") == 2
    assert "iVBORw0KGgo" not in message.text
    assert len(message.text) < 3000
    assert path.stat().st_size > 800_000


def test_conversation_header_comes_from_the_records(transcripts_dir: Path) -> None:
    path = (
        transcripts_dir
        / f"{CC}/claude-code-log/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    )
    conversation = main_bundle(path).conversation
    assert conversation.conversation_id == "cc:session:ef958aa1-0e93-49f0-bb71-150f63befcd1"
    assert (conversation.format, conversation.kind) == ("claude_code", "main")
    assert conversation.external_id == "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    assert (
        conversation.cwd is not None
        and conversation.project_hint == conversation.cwd.rsplit("/", 1)[-1]
    )
    assert conversation.model == "claude-opus-4-7"
    assert conversation.started_at is not None and conversation.ended_at is not None
    assert conversation.started_at < conversation.ended_at
    assert {"version", "gitBranch", "permissionMode", "entrypoint"} <= set(conversation.attributes)


def test_titles_prefer_custom_then_summary_then_the_first_prompt(transcripts_dir: Path) -> None:
    titles = {
        name: read(transcripts_dir / CC / name).bundles[0].conversation.title
        for name in (
            "agent-sessions/small.jsonl",
            "claude-code-log-synthetic/representative_messages.jsonl",
            "marot-spotter/short.jsonl",
        )
    }
    assert titles["agent-sessions/small.jsonl"] == "Stage0 small fixture"
    assert titles["marot-spotter/short.jsonl"] == "mix phx.server doesnt seem to start"
    summary = titles["claude-code-log-synthetic/representative_messages.jsonl"]
    assert summary is not None and len(summary) <= 80
    assert summary.startswith("User learned about Python decorators") and summary.endswith("…")


def test_system_records_without_visible_content_are_not_events(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [
            prompt("u1", None, "Hi", 0),
            envelope("system", "s1", "u1", 1, subtype="turn_duration", durationMs=1200),
            envelope("system", "s2", "s1", 2, subtype="stop_hook_summary", hookErrors=[]),
            envelope(
                "attachment", "t1", "s2", 3, attachment={"type": "todo_reminder", "content": []}
            ),
        ],
    )
    assert main_bundle(path).task_events == ()


def test_print_mode_stream_json_output_reads_as_a_conversation(tmp_path: Path) -> None:
    session = "8f1c2d3e-0000-4000-8000-00000000000a"
    lines_out = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": session,
            "cwd": "/srv/app",
            "model": "claude-sonnet-4-5",
        },
        {
            "type": "assistant",
            "session_id": session,
            "uuid": "s1",
            "parent_tool_use_id": None,
            "message": {
                "id": "msg_s1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [text("Checking."), tool_use("toolu_s1", "Bash", command="ls")],
                "usage": {"input_tokens": 5, "output_tokens": 7},
            },
        },
        {
            "type": "user",
            "session_id": session,
            "uuid": "s2",
            "parent_tool_use_id": None,
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_s1", "content": "app.py"}
                ],
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "session_id": session,
            "num_turns": 1,
            "total_cost_usd": 0.01,
        },
    ]
    path = write_session(tmp_path / "print.jsonl", lines_out)
    bundle = main_bundle(path)
    assert bundle.conversation.external_id == session
    assert [m.text for m in bundle.messages] == ["Checking."]
    (call,) = bundle.tool_calls
    assert (call.status, call.result_text, call.exit_code) == ("ok", "app.py", 0)
