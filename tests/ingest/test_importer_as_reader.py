"""``IMPORTER_IS_A_READER``: ``jobs`` counts the importing process among the readers
(``jobs - 1`` workers), and the import stores exactly what one process stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proctor.ingest import _reading, ingest
from proctor.ingest._readers import Readers
from proctor.store import open_store
from tests.ingest.test_parallel import _content


@pytest.mark.parametrize(
    ("importer_reads", "expected"),
    [(False, {1: 0, 2: 2, 3: 3, 4: 4}), (True, {1: 0, 2: 1, 3: 2, 4: 3})],
)
def test_workers_started_for_jobs(
    monkeypatch: pytest.MonkeyPatch, importer_reads: bool, expected: dict[int, int]
) -> None:
    monkeypatch.setattr(_reading, "IMPORTER_IS_A_READER", importer_reads)
    assert {jobs: _reading.reading_workers(jobs) for jobs in expected} == expected


@pytest.mark.slow
def test_one_worker_and_the_importer_store_the_same_as_one_process(
    tmp_path: Path, transcripts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []

    class CountingReaders(Readers[Any, Any]):
        def __init__(self, count: int, *args: Any, **kwargs: Any) -> None:
            started.append(count)
            super().__init__(count, *args, **kwargs)

    monkeypatch.setattr(_reading, "Readers", CountingReaders)
    monkeypatch.setattr(_reading, "IMPORTER_IS_A_READER", True)
    folder = transcripts_dir / "claude-code"
    reports = []
    for jobs in (1, 2):
        store = open_store(tmp_path / f"jobs-{jobs}.db")
        reports.append(ingest(store, [folder], jobs=jobs))
        store.close()
    assert started == [1]  # jobs=1: no worker; jobs=2: one worker beside the importer
    sequential, parallel = reports
    assert parallel.conversations == sequential.conversations > 30
    assert [str(i) for i in parallel.issues] == [str(i) for i in sequential.issues]
    assert parallel.conversation_ids == sequential.conversation_ids
    assert _content(tmp_path / "jobs-1.db") == _content(tmp_path / "jobs-2.db")
