"""WAL checkpoints of an import, on a thread of their own (SQLite only).

SQLite copies the write-ahead log back into the database file at the first commit that
finds the log past ``wal_autocheckpoint`` pages, inside that commit: with the import's
batches (tens of megabytes each) that is a third of a second of copying and two
``fsync`` calls per commit, during which the importing process hands its workers no new
read units and the machine idles (bench/results/ingest.md). An import's connection turns
that off while it writes (``use_import_cache``); when the batch is committed its engine's
``BackgroundCheckpointer`` runs a ``PASSIVE`` checkpoint on a connection of its own,
which copies what is committed without blocking the next batch, and the log starts over
from its beginning at a later write once everything in it is copied.

``close`` waits for the checkpoint in progress: a store closed right after an import has
its log copied, as it had when the commit did the copying.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path


class BackgroundCheckpointer:
    """``PASSIVE`` checkpoints of one SQLite file, requested by ``request`` and run one at a
    time on a daemon thread, which ends (closing its connection) once no request is left:
    a store that is never closed keeps no thread or file open."""

    def __init__(self, path: Path, *, timeout_s: float) -> None:
        self._path = path
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._pending = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.completed = 0
        """Checkpoints run so far (for tests and benchmarks)."""

    def request(self) -> None:
        """Have the log checkpointed soon; a request made while one runs is served by
        the next run (the log then holds more)."""
        with self._lock:
            if self._closed:
                return
            self._pending = True
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="proctor-wal-checkpoint", daemon=True
                )
                self._thread.start()

    def wait(self) -> None:
        """Return once no checkpoint is requested or running."""
        with self._lock:
            while self._thread is not None:
                self._changed.wait()

    def close(self) -> None:
        """Wait for the checkpoint requested or running; later requests do nothing."""
        with self._lock:
            while self._thread is not None:
                self._changed.wait()
            self._closed = True

    def _serve(self) -> None:
        while True:
            self._run_pending()
            with self._lock:
                if not self._pending:
                    self._thread = None
                    self._changed.notify_all()
                    return

    def _run_pending(self) -> None:
        """Checkpoint until no request is left, on a connection open for that long."""
        try:
            connection = sqlite3.connect(
                self._path, timeout=self._timeout_s, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error:
            with self._lock:
                self._pending = False  # the writer's own checkpoints copy the log
            return
        try:
            while True:
                with self._lock:
                    if not self._pending:
                        return
                    self._pending = False
                # On an error a later checkpoint (or the last close) copies the log.
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                with self._lock:
                    self.completed += 1
        finally:
            connection.close()
