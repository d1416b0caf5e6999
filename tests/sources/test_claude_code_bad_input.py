"""Bad Claude Code input becomes issues naming file, line and reason; the rest is read."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sources.fixtures.claude_code.records import (
    envelope,
    prompt,
    reply,
    text,
    write_session,
)
from tests.sources.helpers import ReadResult, read


def session(tmp_path: Path, *middle: dict[str, object] | str) -> Path:
    """A three-message session with ``middle`` records between its first two messages."""
    return write_session(
        tmp_path / "session.jsonl",
        [
            prompt("u1", None, "Fix the login bug", 0),
            *middle,
            reply("a1", "u1", "msg_1", [text("Fixed.")], 5),
            prompt("u2", "a1", "Thanks", 6),
        ],
    )


def texts(result: ReadResult) -> list[str]:
    return [m.text for b in result.bundles for m in b.messages]


def issues(result: ReadResult) -> list[tuple[str, int | None, str]]:
    return [(i.severity, i.line, i.reason) for i in result.issues]


def test_an_invalid_json_line_is_an_error_and_the_other_lines_are_read(tmp_path: Path) -> None:
    result = read(session(tmp_path, '{"type": "user", "uuid": oops}'))
    ((severity, line, reason),) = issues(result)
    assert (severity, line) == ("error", 2)
    assert reason.startswith("invalid JSON") and reason.endswith("line skipped")
    assert texts(result) == ["Fix the login bug", "Fixed.", "Thanks"]


def test_a_line_that_is_not_an_object_is_an_error(tmp_path: Path) -> None:
    result = read(session(tmp_path, "[1, 2, 3]"))
    assert issues(result) == [("error", 2, "expected a JSON object, got an array; line skipped")]
    assert len(texts(result)) == 3


def test_a_truncated_last_line_is_a_warning(tmp_path: Path) -> None:
    path = session(tmp_path)
    whole = path.read_text()
    path.write_text(whole + json.dumps(prompt("u3", "u2", "half", 7))[:40])
    result = read(path)
    ((severity, line, reason),) = issues(result)
    assert (severity, line) == ("warning", 4)
    assert reason.startswith("truncated last line")
    assert texts(result) == ["Fix the login bug", "Fixed.", "Thanks"]
    assert [b.issues for b in result.bundles] == [()]


def test_an_unknown_record_type_is_skipped_quietly_but_keeps_the_chain(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "session.jsonl",
        [
            prompt("u1", None, "Fix the login bug", 0),
            envelope("hologram-snapshot", "h1", "u1", 1, hologram={"frames": 3}),
            reply("a1", "h1", "msg_1", [text("Fixed.")], 2),
        ],
    )
    result = read(path)
    assert result.issues == []
    (bundle,) = result.bundles
    assert bundle.issues == ()
    assert bundle.messages[1].parent_source_id == "cc:u1"


def test_a_user_record_without_a_message_is_an_error_naming_its_line(tmp_path: Path) -> None:
    broken = envelope("user", "ux", "u1", 1, message="not an object")
    result = read(session(tmp_path, broken))
    assert issues(result) == [
        ("error", 2, "user record has no message object; its content was skipped")
    ]
    assert len(texts(result)) == 3


def test_a_field_whose_type_changed_is_tolerated(tmp_path: Path) -> None:
    drifted = reply("a0", "u1", "msg_0", [text("Looking.")], 1)
    drifted["message"]["content"] = "Looking."  # a string instead of blocks
    drifted["message"]["usage"]["output_tokens"] = "12"  # a string instead of a number
    drifted["timestamp"] = 1_767_225_600  # epoch seconds instead of ISO text
    result = read(session(tmp_path, drifted))
    assert result.issues == []
    (bundle,) = result.bundles
    looking = bundle.messages[1]
    assert looking.text == "Looking."
    assert looking.usage is not None and looking.usage.output_tokens == 0
    assert looking.created_at is not None and looking.created_at.year == 2026


def test_an_exact_copy_of_a_record_is_read_once(tmp_path: Path) -> None:
    again = prompt("u1", None, "Fix the login bug", 0)
    result = read(session(tmp_path, again))
    assert texts(result) == ["Fix the login bug", "Fixed.", "Thanks"]
    assert result.bundles[0].issues == ()


def test_a_different_record_reusing_a_uuid_is_kept_with_a_warning(tmp_path: Path) -> None:
    clash = prompt("u1", None, "Another prompt with the same uuid", 1)
    result = read(session(tmp_path, clash))
    (bundle,) = result.bundles
    assert [m.source_id for m in bundle.messages] == ["cc:u1", "cc:msg:msg_1", "cc:u2", "cc:u1#2"]
    ((severity, line, reason),) = [(i.severity, i.line, i.reason) for i in bundle.issues]
    assert (severity, line) == ("warning", 2)
    assert "reuse a uuid" in reason


def test_a_record_without_a_type_is_a_warning(tmp_path: Path) -> None:
    result = read(session(tmp_path, {"silly": "this"}))
    assert issues(result) == [("warning", 2, 'record has no "type" field; skipped')]


def test_a_file_of_only_broken_lines_reports_each_and_raises_nothing(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    good = json.dumps(prompt("u1", None, "ok", 0))
    path.write_text("\n".join([good, "{nope", "42", "{also nope"]) + "\n")
    result = read(path)
    assert [(s, line) for s, line, _ in issues(result)] == [
        ("error", 2),
        ("error", 3),
        ("error", 4),
    ]
    assert texts(result) == ["ok"]


def test_reading_a_folder_with_non_transcripts_beside_sessions_leaves_them_alone(
    tmp_path: Path,
) -> None:
    session(tmp_path)
    (tmp_path / "notes.txt").write_text("not a transcript")
    (tmp_path / "settings.json").write_text('{"theme": "dark"}')
    result = read(tmp_path)
    assert result.issues == []
    assert len(result.bundles) == 1
