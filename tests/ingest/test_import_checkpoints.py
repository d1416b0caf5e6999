"""An import's commits leave copying the write-ahead log to a thread of the store's
engine (``proctor.store._checkpoint``): the batch's connection takes no checkpoint at its
commit, the log is copied right after on a connection of its own, ordinary writes keep
SQLite's own checkpoints, and closing the store waits for the copy in progress."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.store import open_store
from proctor.store._checkpoint import BackgroundCheckpointer
from tests.backends import ON_POSTGRES
from tests.ingest.test_import_page_cache import pragma_at_checkin

pytestmark = pytest.mark.skipif(ON_POSTGRES, reason="SQLite's write-ahead log")

SQLITE_DEFAULT_CHECKPOINT = 1000
"""SQLite's default ``wal_autocheckpoint``: 1,000 pages."""


@pytest.fixture
def checkpoint_setting_at_checkin() -> Iterator[list[int]]:
    """The ``wal_autocheckpoint`` of every pooled connection as it goes back to its pool,
    before the store's own listener runs: what its transaction committed with."""
    with pragma_at_checkin("wal_autocheckpoint") as seen:
        yield seen


def _writer_without_checkpoints(path: Path) -> sqlite3.Connection:
    """A WAL database at ``path`` with one table, written by a connection that never
    checkpoints (as an import's batch writes)."""
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("CREATE TABLE t (x TEXT)")
    return writer


def _copied_bytes(path: Path) -> int:
    """Bytes of the database file itself: what checkpoints have copied out of the log
    (reading the log's own counters would take a checkpoint)."""
    return path.stat().st_size


def test_an_import_commits_without_a_checkpoint_and_one_follows_on_its_own(
    tmp_path: Path, checkpoint_setting_at_checkin: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import TRANSCRIPTS_DIR

    session = TRANSCRIPTS_DIR / "claude-code/marot-spotter/short.jsonl"
    if not session.is_file():
        pytest.skip("../shared/transcripts is not here")
    requested = threading.Event()
    original = BackgroundCheckpointer.request

    def request(self: BackgroundCheckpointer) -> None:
        requested.set()
        original(self)

    monkeypatch.setattr(BackgroundCheckpointer, "request", request)
    store = open_store(tmp_path / "store.db")
    try:
        report = ingest(store, [session], jobs=1)
        assert report.conversations == 1 and not report.errors
        assert 0 in checkpoint_setting_at_checkin  # the batch's commit copied nothing
        assert requested.is_set()
        during = len(checkpoint_setting_at_checkin)
        store.begin_import(("other",), format_name=None, project=None)  # an ordinary write
        assert set(checkpoint_setting_at_checkin[during:]) == {SQLITE_DEFAULT_CHECKPOINT}
    finally:
        store.close()
    # The thread ended once the copy was done (a store never closed keeps none).
    for thread in threading.enumerate():
        if thread.name == "proctor-wal-checkpoint":
            thread.join(timeout=10)
            assert not thread.is_alive()
    reopened = open_store(tmp_path / "store.db", read_only=True)
    try:
        assert [c.conversation_id for c in reopened.list_conversations()] == report.conversation_ids
    finally:
        reopened.close()


def test_the_checkpointer_copies_what_is_committed(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    writer = _writer_without_checkpoints(path)
    writer.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 2_000)
    assert _copied_bytes(path) < 100_000  # 1 MB of rows, all in the log
    checkpointer = BackgroundCheckpointer(path, timeout_s=5)
    checkpointer.request()
    checkpointer.wait()
    assert checkpointer.completed == 1
    assert _copied_bytes(path) > 1_000_000
    # More writes after it; closing waits for the copy requested last.
    writer.executemany("INSERT INTO t VALUES (?)", [("y" * 500,)] * 2_000)
    checkpointer.request()
    checkpointer.close()
    assert checkpointer.completed == 2
    assert _copied_bytes(path) > 2_000_000
    checkpointer.request()  # after close: nothing runs, nothing waits
    checkpointer.wait()
    assert checkpointer.completed == 2
    writer.close()


def test_requests_while_one_runs_are_served_by_the_next(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    writer = _writer_without_checkpoints(path)
    checkpointer = BackgroundCheckpointer(path, timeout_s=5)
    for round_ in range(20):
        writer.executemany("INSERT INTO t VALUES (?)", [(str(round_) * 500,)] * 100)
        checkpointer.request()
    checkpointer.wait()
    assert 1 <= checkpointer.completed <= 20
    assert _copied_bytes(path) > 20 * 100 * 500
    checkpointer.close()
    writer.close()
