"""Search runs on every store backend: SQLite always, PostgreSQL when a server is given."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.search import missing_embeddings
from proctor.search._onnx import missing_runtime as _missing_runtime
from proctor.store import SqlStore
from tests.backends import open_real_store
from tests.store.conftest import backend_url, open_backend

__all__ = ["backend_url"]

needs_embeddings = pytest.mark.skipif(
    missing_embeddings() is not None, reason=f"embeddings unavailable: {missing_embeddings()}"
)

needs_onnx = pytest.mark.skipif(
    missing_embeddings() is not None or _missing_runtime() is not None,
    reason=f"ONNX Runtime unavailable: {missing_embeddings() or _missing_runtime()}",
)


@pytest.fixture
def store(backend_url: str | Path) -> Iterator[SqlStore]:
    """A writable store on a fresh database of the parametrised backend."""
    opened = open_backend(backend_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqlStore]:
    """A writable store in a fresh SQLite file (on every backend run: ``store`` covers both)."""
    opened = open_real_store(tmp_path / "proctor.db")
    try:
        yield opened
    finally:
        opened.close()
