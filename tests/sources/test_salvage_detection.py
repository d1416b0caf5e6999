"""A damaged log whose first lines are broken or of another shape is still read.

Provider request/response logs are recognised from their first records, and a record of
another shape there says the file is another tool's. When a file is damaged (a line
that is not JSON) and no adapter recognises it, the one adapter that finds records of
its format among the first lines reads it: the good records are stored and every other
line is reported (issue 16: no bad record ends an import).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import read_paths
from proctor.transcript import ConversationBundle, SourceIssue

GOOD: dict[str, dict[str, Any]] = {
    "openai_chat": {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "KEPT"},
                "finish_reason": "stop",
            }
        ],
    },
    "openai_responses": {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "KEPT"}],
            }
        ],
    },
    "anthropic": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": "KEPT"}],
        "stop_reason": "end_turn",
    },
}

FOREIGN = [
    {"unexpected": ["shape"]},
    {"event": "heartbeat", "at": 17},
    {},
]


def _broken(record: dict[str, Any], how: str) -> bytes:
    line = json.dumps(record).encode()
    if how == "truncated":
        return line[: len(line) // 2]
    if how == "garbage":
        return b"\xff\xfe\x00 not json \x01"
    return line.replace(b":", b": 0x8f3a", 1)  # an unquoted hex number


def _read(path: Path) -> tuple[list[ConversationBundle], list[SourceIssue]]:
    bundles: list[ConversationBundle] = []
    issues: list[SourceIssue] = []
    for item in read_paths([path.parent]):
        if isinstance(item, SourceIssue):
            issues.append(item)
        else:
            bundles.append(item)
            issues.extend(item.issues)  # a record the adapter read but could not use
    return bundles, issues


def _texts(bundles: list[ConversationBundle]) -> str:
    return " ".join(str(m.text) for b in bundles for m in b.messages)


@pytest.mark.parametrize("fmt", sorted(GOOD))
@pytest.mark.parametrize("how", ["truncated", "garbage", "hex"])
@pytest.mark.parametrize("foreign", range(len(FOREIGN)))
def test_a_good_record_after_a_broken_and_a_foreign_line_is_stored(
    tmp_path: Path, fmt: str, how: str, foreign: int
) -> None:
    good = GOOD[fmt]
    path = tmp_path / "log.jsonl"
    lines = [_broken(good, how), json.dumps(FOREIGN[foreign]).encode(), json.dumps(good).encode()]
    path.write_bytes(b"\n".join(lines) + b"\n")

    bundles, issues = _read(path)

    assert [b.conversation.format for b in bundles] == [fmt]
    assert "KEPT" in _texts(bundles)
    reported = {issue.line for issue in issues if issue.severity == "error"}
    assert 1 in reported, issues
    if FOREIGN[foreign]:
        assert 2 in reported, issues  # the foreign line is named, not silently dropped
    assert not any("no line was recognised" in issue.reason for issue in issues)


def test_an_undamaged_file_with_a_foreign_first_line_is_still_not_taken(tmp_path: Path) -> None:
    """Salvage is for damaged files: a readable file that opens with another tool's line
    stays unrecognised (it is that tool's file, not a broken log)."""
    path = tmp_path / "other.jsonl"
    lines = [{"tool": "other", "version": 3}, GOOD["openai_chat"], {"tool": "other", "end": True}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    bundles, issues = _read(path)

    assert bundles == []
    assert issues == []  # a folder's file in a format nobody knows is left alone quietly


def test_a_damaged_file_is_salvaged_by_the_first_adapter_in_detection_order(
    tmp_path: Path,
) -> None:
    """An Anthropic response also reads as a Chat Completions message line: as in
    detection, the adapter that comes first takes the file, and the records it cannot
    read are reported by line, not dropped."""
    path = tmp_path / "mixed.jsonl"
    lines = [
        b"{broken",
        json.dumps({"unexpected": 1}).encode(),
        json.dumps(GOOD["anthropic"]).encode(),
        json.dumps(GOOD["openai_chat"]).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")

    bundles, issues = _read(path)

    assert [b.conversation.format for b in bundles] == ["anthropic"]
    assert {1, 2, 4} <= {issue.line for issue in issues}, issues


def test_a_damaged_file_with_no_record_of_any_format_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "nothing.jsonl"
    path.write_bytes(b'{broken\n{"unexpected": 1}\n{"event": "x"}\n')

    bundles, issues = _read(path)

    assert bundles == []
    assert any("no line was recognised" in issue.reason for issue in issues)
    assert any(issue.line == 1 for issue in issues)


@pytest.mark.parametrize("fmt", sorted(GOOD))
def test_one_good_line_among_more_broken_ones_in_a_jsonl_file_is_stored(
    tmp_path: Path, fmt: str
) -> None:
    """Fewer than half the first lines are objects and the first does not even start like
    JSON: in a file named as JSON Lines that is damage, not prose."""
    good = json.dumps(GOOD[fmt]).encode()
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\xef\xbb\xbfRO~c" + good + b"\n" + good + b"\n" + good[:40] + b"\n")

    bundles, issues = _read(path)

    assert [b.conversation.format for b in bundles] == [fmt]
    assert "KEPT" in _texts(bundles)
    assert {1, 3} <= {issue.line for issue in issues}, issues


def test_prose_named_as_text_is_still_not_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"Some notes\n" + json.dumps(GOOD["openai_chat"]).encode() + b"\nmore words\n")

    bundles, _ = _read(path)

    assert bundles == []
