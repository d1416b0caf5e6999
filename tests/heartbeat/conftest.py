"""A store holding the bundled examples, with the supervisor app on, and a settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from proctor.heartbeat import set_app_enabled
from proctor.ingest import ingest
from proctor.store import SqlStore, open_store
from tests.conftest import EXAMPLES_DIR

START = datetime(2026, 11, 20, 7, 0, tzinfo=UTC)
"""A Friday morning: 08:00 in Berlin."""


@dataclass
class Clock:
    """A clock the test moves by hand."""

    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def empty_store(tmp_path: Path) -> Iterator[SqlStore]:
    """A fresh store: nothing imported, the app still at its default (off)."""
    store = open_store(tmp_path / "proctor.db")
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def examples_store(empty_store: SqlStore) -> SqlStore:
    """The bundled examples imported and the supervisor app enabled."""
    ingest(empty_store, [EXAMPLES_DIR])
    set_app_enabled(empty_store, True)
    return empty_store
