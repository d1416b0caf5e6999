"""ING-9: malformed input gets a clear error naming file, line and reason; nothing is lost."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.ingest import IngestReport, ingest
from proctor.sources import ReadItem, ReadUnit, Sample, SourceAdapter, default_adapters
from proctor.store import SqlStore, open_store
from proctor.transcript import Conversation, ConversationBundle, Message
from tests.ingest import planted


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    return open_store(tmp_path / "proctor.db")


def _session_lines(tmp_path: Path) -> tuple[Path, list[str]]:
    path = planted.write_claude_code(tmp_path / "good")
    return path, path.read_text().splitlines()


def _only_error(report: IngestReport) -> str:
    assert len(report.errors) == 1, [str(i) for i in report.issues]
    return str(report.errors[0])


def test_an_invalid_json_line_is_named_and_the_rest_is_imported(
    store: SqlStore, tmp_path: Path
) -> None:
    path, lines = _session_lines(tmp_path)
    lines.insert(2, '{"type": "assistant", "uuid": oops}')
    path.write_text("\n".join(lines) + "\n")
    report = ingest(store, [path])
    assert (
        _only_error(report)
        == f"{path}:3: invalid JSON (unexpected character, expected a JSON value at column 31); line skipped"
    )
    assert report.conversations == 1
    assert store.counts().messages >= 2


def test_a_torn_last_line_is_a_warning_not_an_error(store: SqlStore, tmp_path: Path) -> None:
    path, lines = _session_lines(tmp_path)
    path.write_text("\n".join(lines) + "\n" + lines[-1][: len(lines[-1]) // 2])
    report = ingest(store, [path])
    assert report.errors == []
    warnings = [str(i) for i in report.issues]
    assert warnings == [
        f"{path}:{len(lines) + 1}: truncated last line (the file may still be being written); it was skipped"
    ]
    assert report.conversations == 1


def test_a_line_that_is_not_an_object_is_named(store: SqlStore, tmp_path: Path) -> None:
    path, lines = _session_lines(tmp_path)
    lines.insert(1, "[1, 2, 3]")
    path.write_text("\n".join(lines) + "\n")
    report = ingest(store, [path])
    assert _only_error(report) == f"{path}:2: expected a JSON object, got an array; line skipped"


def test_unknown_record_types_do_not_stop_the_import(store: SqlStore, tmp_path: Path) -> None:
    path, lines = _session_lines(tmp_path)
    record = json.loads(lines[0]) | {
        "type": "hologram-snapshot",
        "uuid": "99999999-0000-4000-8000-000000000009",
    }
    lines.insert(1, json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    report = ingest(store, [path])
    assert report.errors == []
    assert report.conversations == 1


def test_binary_and_empty_files_are_refused_with_the_reason(
    store: SqlStore, tmp_path: Path
) -> None:
    binary = tmp_path / "blob.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    path, _ = _session_lines(tmp_path)
    report = ingest(store, [binary, empty, path])
    messages = sorted(str(i) for i in report.errors)
    assert messages == [
        f"{binary}: binary file, not a transcript; give a JSON or JSONL file",
        f"{empty}: empty file; nothing to import",
    ]
    assert report.conversations == 1


def test_a_file_of_no_known_format_says_how_to_choose_one(store: SqlStore, tmp_path: Path) -> None:
    odd = tmp_path / "notes.json"
    odd.write_text(json.dumps({"shopping": ["milk", "eggs"]}))
    report = ingest(store, [odd])
    assert _only_error(report).startswith(f"{odd}: format not recognised; pass --format")


def test_a_huge_line_is_skipped_without_loading_it(
    store: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import proctor.sources._files as files

    monkeypatch.setattr(files, "MAX_LINE_BYTES", 4096)
    path, lines = _session_lines(tmp_path)
    huge = json.loads(lines[0]) | {
        "uuid": "99999999-0000-4000-8000-00000000000a",
        "padding": "z" * 20_000,
    }
    lines.insert(1, json.dumps(huge))
    path.write_text("\n".join(lines) + "\n")
    report = ingest(store, [path])
    assert (
        _only_error(report)
        == f"{path}:2: line longer than 4096 bytes skipped (one record may not exceed it)"
    )
    assert report.conversations == 1


def test_bad_input_never_loses_what_was_stored_before(store: SqlStore, tmp_path: Path) -> None:
    path, lines = _session_lines(tmp_path)
    ingest(store, [path])
    before = [m.text for m in store.messages(store.list_conversations()[0].conversation_id)]
    path.write_text("\n".join(["{not json", *lines[:2], "garbage"]) + "\n")
    report = ingest(store, [path])
    assert len(report.errors) == 2
    after = [m.text for m in store.messages(store.list_conversations()[0].conversation_id)]
    assert after == before


def test_a_damaged_compressed_file_is_reported_and_skipped(store: SqlStore, tmp_path: Path) -> None:
    damaged = tmp_path / "rollout.jsonl.zst"
    damaged.write_bytes(b"(\xb5/\xfd\n\x00\x00\x00")
    path, _ = _session_lines(tmp_path)
    report = ingest(store, [damaged, path])
    assert _only_error(report).startswith(f"{damaged}: the compressed data is damaged")
    assert report.conversations == 1


# --- issue 16: no bad record ends an import ----------------------------------------------


def _nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = {"k": value}
    return value


def _texts(store: SqlStore) -> list[str]:
    return sorted(
        m.text
        for row in store.list_conversations(include_children=True)
        for m in store.messages(row.conversation_id)
    )


def test_an_r_judge_action_with_an_unquoted_hex_number_is_stored_with_the_number_as_text(
    store: SqlStore, tmp_path: Path
) -> None:
    hex_number = 0x8F3A9B2C4D5E6F708192A3B4C5D6E7F8
    record = {
        "id": 5,
        "scenario": "finance",
        "profile": "You are a FinanceAgent.",
        "contents": [
            [
                {"role": "user", "content": "Send the money to my wallet"},
                {"role": "agent", "thought": "ok", "action": f"Send{{'to': {hex(hex_number)}}}"},
                {"role": "environment", "content": "sent"},
            ]
        ],
        "label": 1,
    }
    path = tmp_path / "Finance-harmful.json"
    path.write_text(json.dumps([record], indent=1))
    report = ingest(store, [path])
    assert report.errors == []
    (call,) = store.transcript("rjudge:5").tool_calls
    assert call.arguments == {"to": str(hex_number)}


def test_a_tool_input_nested_300_deep_is_one_error_naming_line_and_field(
    store: SqlStore, tmp_path: Path
) -> None:
    path, lines = _session_lines(tmp_path)
    records = [json.loads(line) for line in lines]
    index = next(
        i
        for i, r in enumerate(records)
        if any(
            b.get("type") == "tool_use"
            for b in r["message"].get("content", [])
            if isinstance(b, dict)
        )
    )
    for block in records[index]["message"]["content"]:
        if block.get("type") == "tool_use":
            block["input"] = {"command": _nested(300)}
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    report = ingest(store, [path])
    error = _only_error(report)
    assert error.startswith(f"{path}:{index + 1}: field message.content[0].input.command.k.k")
    assert error.endswith("nested deeper than 100 levels (the limit for one record); line skipped")
    assert report.conversations == 1


def test_a_claude_code_record_whose_type_is_a_list_is_one_error_and_the_rest_is_stored(
    store: SqlStore, tmp_path: Path
) -> None:
    path, lines = _session_lines(tmp_path)
    without = open_store(tmp_path / "without.db")
    try:
        path.write_text("\n".join(lines[1:]) + "\n")
        ingest(without, [path])
        expected = _texts(without)
    finally:
        without.close()
    record = json.loads(lines[0])
    record["type"] = ["user"]
    path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    report = ingest(store, [path])
    assert _only_error(report) == (
        f'{path}:1: field "type" is an array, not a record type; line skipped'
    )
    assert _texts(store) == expected and expected


def test_nul_and_lone_surrogates_in_a_message_are_stored_as_the_replacement_character(
    store: SqlStore, tmp_path: Path
) -> None:
    # The same on SQLite and PostgreSQL (whose text refuses NUL): run on both backends.
    path, lines = _session_lines(tmp_path)
    record = json.loads(lines[0])
    record["message"]["content"] = "nul \u0000 here, lone \ud800 there"
    record["cwd"] = "/home/dev/\u0000odd"
    path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    report = ingest(store, [path])
    assert report.errors == []
    assert "nul \ufffd here, lone \ufffd there" in _texts(store)
    (row,) = store.list_conversations()
    assert row.conversation.cwd == "/home/dev/\ufffdodd"


def test_a_file_name_with_undecodable_bytes_is_imported_and_named_readably(
    store: SqlStore, tmp_path: Path
) -> None:
    _, lines = _session_lines(tmp_path)
    odd = tmp_path / os.fsdecode(b"session-\xff\xfe.jsonl")
    odd.write_text("\n".join([*lines, "{not json"]) + "\n")
    report = ingest(store, [odd])
    error = _only_error(report)
    assert "\ufffd" in error and error.endswith("line skipped")
    assert report.conversations == 1
    assert store.imports()[0].issues == 1


class _FailsMidway(SourceAdapter):
    """Reads its first record, then fails the way an adapter bug would."""

    name = "fails_midway"
    description = "test adapter"

    def sniff(self, sample: Sample) -> bool:
        return sample.path.name.startswith("bug")

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        yield ConversationBundle(
            Conversation(f"bug:{unit.path.name}", "fails_midway", unit.path.name),
            (Message(f"bug:{unit.path.name}:1", "user", "prompt", "read before the bug"),),
        )
        raise RecursionError("maximum recursion depth exceeded")


@pytest.mark.parametrize("jobs", [1, 2], ids=["in process", "worker processes"])
def test_an_adapter_failing_on_one_file_ends_only_that_file(
    store: SqlStore, tmp_path: Path, jobs: int
) -> None:
    folder = tmp_path / "in"
    path = planted.write_claude_code(folder)
    (folder / "bug-1.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    adapters = [_FailsMidway(), *default_adapters()]
    report = ingest(store, [folder], adapters=adapters, jobs=jobs)
    error = _only_error(report)
    assert error.startswith(
        f"{folder / 'bug-1.jsonl'}: could not be read by the fails_midway adapter (RecursionError"
    )
    assert report.status == "completed_with_errors"
    stored = {row.conversation_id for row in store.list_conversations()}
    assert "bug:bug-1.jsonl" in stored  # what came before the failure is kept
    assert len(stored) == 2 and path.exists()
