"""Fixtures for supervisor tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.store import SqlStore, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    """A fresh SQLite store."""
    opened = open_store(tmp_path / "p.db")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio."""
    return "asyncio"
