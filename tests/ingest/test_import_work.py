"""What an import does per unit is bounded: each file is hashed once, by its reader when it
was never imported, and the importing process's garbage collector is left as it was."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from proctor.ingest import _ingest, _reading, ingest, unit_digest
from proctor.sources._source import ReadUnit
from proctor.store import open_store
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
