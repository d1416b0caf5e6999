"""Indexing handed to a detached process, so no short command waits for embeddings.

``proctor ingest`` and ``proctor search`` end long before a large import is embedded. They
call ``hand_off_indexing``: when the index is behind (sources not indexed for full text, or
documents without a vector of the installed encoder) and no indexer of this store is
running, it starts ``python -m proctor.search`` in a session of its own and returns
without waiting. That process brings the full text up to date, embeds every document that
lacks a vector, a chunk per transaction, and exits. Killed half-way, it leaves whole chunks
behind; the next one (or a server's background indexer) goes on from there.

One indexer per store at a time: the detached process and the background indexer of
``proctor serve``/``proctor mcp``/``proctor watch`` take the store's indexer lock to embed
(SQLite: ``flock`` on ``<database>.indexer.lock`` beside the file; PostgreSQL: a session
advisory lock), and whoever holds it is "the background indexer is adding them" in a
search's answer. The lock goes with its process, however that ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from sqlalchemy import text

from proctor._util.detached import start_detached
from proctor.errors import ProctorError
from proctor.search._embed import count_unembedded
from proctor.search._encoder import installed_encoder_name
from proctor.search._index import full_text_behind
from proctor.store import SqlStore

log = logging.getLogger("proctor.search.handoff")

SQLITE_VARIABLE = "PROCTOR_INDEX_SQLITE"
"""Names the SQLite file a detached indexer opens (a PostgreSQL URL goes in
``PROCTOR_DATABASE_URL``)."""
SWITCH_VARIABLE = "PROCTOR_BACKGROUND_INDEXING"
"""``0`` turns the hand-off off (the test suite does: no test leaves a process behind);
``proctor search --index-only`` or a server then does the work."""
INDEXER_LOCK = 0x50524F49  # "PROI"
"""PostgreSQL session advisory lock the store's embedding indexer holds."""


class IndexerLock:
    """The store's indexer lock, taken without waiting (``held`` says whether it was)."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store
        self._file: IO[bytes] | None = None
        self._connection: Any = None
        self.held = False

    def acquire(self) -> bool:
        """Take the lock if no other process holds it; True when this object holds it."""
        if self.held:
            return True
        if self._store.dialect == "sqlite":
            handle = lock_path(self._store).open("ab")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                return False
            self._file = handle
        else:
            connection = self._store._writer.connect()
            taken = connection.execute(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": INDEXER_LOCK}
            ).scalar_one()
            connection.commit()
            if not taken:
                connection.close()
                return False
            self._connection = connection
        self.held = True
        return True

    def release(self) -> None:
        """Let the lock go (closing the file or connection that holds it)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._connection is not None:
            with contextlib.suppress(Exception):  # a closed connection releases it as well
                self._connection.execute(
                    text("SELECT pg_advisory_unlock(:key)"), {"key": INDEXER_LOCK}
                )
                self._connection.commit()
            self._connection.close()
            self._connection = None
        self.held = False


def lock_path(store: SqlStore) -> Path:
    """The SQLite store's lock file, beside the database."""
    return Path(f"{store.description}.indexer.lock")


@contextlib.contextmanager
def indexer_lock(store: SqlStore) -> Iterator[bool]:
    """The indexer lock for a block: yields whether it was taken."""
    lock = IndexerLock(store)
    try:
        yield lock.acquire()
    finally:
        lock.release()


def indexer_running(store: SqlStore) -> bool:
    """Whether some process (this one included) holds the store's indexer lock."""
    with indexer_lock(store) as taken:
        return not taken


def index_behind(store: SqlStore, model: str | None) -> bool:
    """Whether full text or embeddings (of ``model``, None: none) have work to do."""
    with store.repos.search.read() as connection:
        if full_text_behind(connection):
            return True
        return model is not None and count_unembedded(connection, model) > 0


def hand_off_indexing(store: SqlStore) -> subprocess.Popen[bytes] | None:
    """Start a detached indexer when the index is behind and none is running (returned, not
    waited for); None otherwise. Never raises: the next command or server tries again.
    The encoder is not loaded here: only its model id is needed to see what is missing."""
    if os.environ.get(SWITCH_VARIABLE, "").strip() == "0":
        return None
    try:
        if not index_behind(store, installed_encoder_name()) or indexer_running(store):
            return None
    except (ProctorError, OSError, ValueError) as exc:
        log.warning("search indexing not handed off: %s", exc)
        return None
    env = dict(os.environ)
    if store.dialect == "sqlite":
        env[SQLITE_VARIABLE] = store.description
    else:
        env["PROCTOR_DATABASE_URL"] = store.database_url()
    return start_detached([sys.executable, "-m", "proctor.search"], env)
