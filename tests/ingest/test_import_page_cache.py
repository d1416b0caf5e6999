"""An import's batches write with a larger SQLite page cache, which their connection gives
back when the batch ends; readers and other writes keep SQLite's default."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.pool import Pool

from proctor.ingest import ingest
from proctor.store import open_store
from proctor.store._engine import IMPORT_CACHE_KIB
from tests.backends import ON_POSTGRES

pytestmark = pytest.mark.skipif(ON_POSTGRES, reason="SQLite's page cache")

SQLITE_DEFAULT = -2000
"""SQLite's default ``cache_size``: 2,000 KiB."""


@contextmanager
def pragma_at_checkin(name: str) -> Iterator[list[int]]:
    """The value of the PRAGMA ``name`` on every pooled connection as it goes back to its
    pool, before the store's own listener (an engine's) runs: what the transaction ran
    with."""
    seen: list[int] = []

    def record(dbapi_connection: Any, _record: Any) -> None:
        if dbapi_connection is not None:
            seen.append(dbapi_connection.execute(f"PRAGMA {name}").fetchone()[0])

    event.listen(Pool, "checkin", record)
    try:
        yield seen
    finally:
        event.remove(Pool, "checkin", record)


@pytest.fixture
def cache_at_checkin() -> Iterator[list[int]]:
    """``cache_size`` as each pooled connection goes back to its pool."""
    with pragma_at_checkin("cache_size") as seen:
        yield seen


def test_an_import_writes_with_the_larger_cache_and_gives_it_back(
    tmp_path: Path, cache_at_checkin: list[int]
) -> None:
    from tests.conftest import TRANSCRIPTS_DIR

    session = TRANSCRIPTS_DIR / "claude-code/marot-spotter/short.jsonl"
    if not session.is_file():
        pytest.skip("../shared/transcripts is not here")
    store = open_store(tmp_path / "store.db")
    try:
        report = ingest(store, [session], jobs=1)
        assert report.conversations == 1 and not report.errors
        assert -IMPORT_CACHE_KIB in cache_at_checkin
        during = len(cache_at_checkin)
        store.begin_import(
            ("other",), format_name=None, project=None
        )  # an ordinary write on the same pooled connection
        assert store.list_conversations()  # a read
        assert cache_at_checkin[during:] and set(cache_at_checkin[during:]) == {SQLITE_DEFAULT}
    finally:
        store.close()


def test_a_write_outside_an_import_keeps_the_default_cache(
    tmp_path: Path, cache_at_checkin: list[int]
) -> None:
    store = open_store(tmp_path / "store.db")
    try:
        store.begin_import(("nothing",), format_name=None, project=None)
        with store.import_batch():
            pass  # a batch that writes no conversation takes no larger cache
        assert cache_at_checkin and set(cache_at_checkin) == {SQLITE_DEFAULT}
    finally:
        store.close()
