"""What an import does per unit is bounded: each file is hashed once, by its reader when it
was never imported, and the importing process's garbage collector is left as it was."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from proctor.ingest import _ingest, _reading, ingest, unit_digest
from proctor.ingest._reading import DIGEST_MARK, legacy_unit_digest
from proctor.sources._source import ReadUnit
from proctor.store import open_store
from tests.backends import raw_connection
from tests.ingest.copies import session_copies


@pytest.fixture
def sessions(tmp_path: Path, transcripts_dir: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    return session_copies(transcripts_dir, folder, 4)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The primary path of every unit hashed, in this process."""
    seen: list[Path] = []

    def counting(unit: ReadUnit) -> tuple[str, int]:
        seen.append(unit.path)
        return unit_digest(unit)

    monkeypatch.setattr(_reading, "unit_digest", counting)
    monkeypatch.setattr(_ingest, "unit_digest", counting)
    return seen


def test_each_new_file_is_hashed_once_and_its_hash_is_recorded(
    sessions: Path, tmp_path: Path, hashed: list[Path]
) -> None:
    store = open_store(tmp_path / "proctor.db")
    report = ingest(store, [sessions], jobs=1)
    assert report.conversations == 4
    assert sorted(hashed) == sorted(sessions.iterdir())
    for path in sessions.iterdir():
        recorded = store.imported_file(str(path.resolve()))
        assert recorded is not None
        assert (recorded.content_hash, recorded.size) == unit_digest(ReadUnit(path))
    hashed.clear()
    again = ingest(store, [sessions], jobs=1)
    assert again.by_format["claude_code"].skipped_unchanged == 4
    assert sorted(hashed) == sorted(sessions.iterdir())  # to tell them unchanged
    store.close()


def test_a_changed_file_is_hashed_once_and_read_again(
    sessions: Path, tmp_path: Path, hashed: list[Path]
) -> None:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [sessions], jobs=1)
    changed = sessions / "session-0002.jsonl"
    changed.write_bytes(changed.read_bytes().replace(b'"text":"', b'"text":"again ', 1))
    hashed.clear()
    report = ingest(store, [sessions], jobs=1)
    assert report.by_format["claude_code"].skipped_unchanged == 3
    assert sorted(hashed) == sorted(sessions.iterdir())
    recorded = store.imported_file(str(changed.resolve()))
    assert recorded is not None
    assert recorded.content_hash == unit_digest(ReadUnit(changed))[0]
    store.close()


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_import_leaves_the_garbage_collector_as_it_found_it(
    sessions: Path, tmp_path: Path, jobs: int
) -> None:
    before = gc.get_threshold()
    gc.set_threshold(321, 7, 9)
    try:
        ingest(open_store(tmp_path / "proctor.db"), [sessions], jobs=jobs)
        assert gc.get_threshold() == (321, 7, 9)
    finally:
        gc.set_threshold(*before)


def test_the_import_collects_garbage_less_often_while_it_runs(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    during: list[tuple[int, int, int]] = []
    write_unit = _ingest._write_unit

    def watching(*args: object, **kwargs: object) -> None:
        during.append(gc.get_threshold())
        write_unit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_ingest, "_write_unit", watching)
    ingest(open_store(tmp_path / "proctor.db"), [sessions], jobs=1)
    assert during == [_reading.IMPORT_GC_THRESHOLD] * 4


def test_a_unit_recorded_with_an_older_blake2b_digest_is_skipped_unread_until_it_changes(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [sessions], jobs=1)
    # As an import before SHA-256 recorded them: 32 hex digits of BLAKE2b.
    with raw_connection(tmp_path / "proctor.db") as connection:
        for path in sessions.iterdir():
            legacy = legacy_unit_digest(ReadUnit(path))[0]
            assert len(legacy) == 32 and not legacy.startswith(DIGEST_MARK)
            connection.execute(
                text("UPDATE import_files SET content_hash = :hash WHERE path = :path"),
                {"hash": legacy, "path": str(path.resolve())},
            )
        connection.commit()
    read: list[Path] = []
    real_read_rows = _reading.read_rows

    def counting(adapter: Any, unit: ReadUnit, limits: Any) -> Any:
        read.append(unit.path)
        return real_read_rows(adapter, unit, limits)

    monkeypatch.setattr(_reading, "read_rows", counting)
    again = ingest(store, [sessions], jobs=1)
    assert again.by_format["claude_code"].skipped_unchanged == 4
    assert read == []
    assert (again.sources_added, again.sources_revised) == (0, 0)
    changed = sessions / "session-0002.jsonl"
    changed.write_bytes(changed.read_bytes().replace(b'"text":"', b'"text":"again ', 1))
    report = ingest(store, [sessions], jobs=1)
    assert report.by_format["claude_code"].skipped_unchanged == 3
    assert read == [changed]
    recorded = store.imported_file(str(changed.resolve()))
    assert recorded is not None
    assert recorded.content_hash == unit_digest(ReadUnit(changed))[0]
    assert recorded.content_hash.startswith(DIGEST_MARK) and len(recorded.content_hash) == 32
    store.close()
