"""ING-9: malformed input gets a clear error naming file, line and reason; nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.ingest import IngestReport, ingest
from proctor.store import SqlStore, open_store
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
