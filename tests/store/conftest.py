"""The store contract suite runs on every backend: SQLite always, PostgreSQL when a server is given.

Set ``PROCTOR_TEST_POSTGRES_URL`` to an admin URL (``.ci/run`` starts a local server and
sets it); each test then gets a fresh database that is dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from proctor.store import SqlStore, open_store

POSTGRES_URL = os.environ.get("PROCTOR_TEST_POSTGRES_URL")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    """A fresh, empty database for each backend: a SQLite path or a PostgreSQL URL."""
    if request.param == "sqlite":
        yield tmp_path / "proctor.db"
        return
    if not POSTGRES_URL:
        pytest.skip(
            "PostgreSQL backend: set PROCTOR_TEST_POSTGRES_URL (make test does when a server is available)"
        )
    admin_url = make_url(POSTGRES_URL).set(drivername="postgresql+psycopg")
    name = f"proctor_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def open_backend(location: str | Path, *, read_only: bool = False) -> SqlStore:
    """Open a store on a SQLite path or a database URL."""
    if isinstance(location, Path):
        return open_store(location, read_only=read_only)
    return open_store(url=location, read_only=read_only)


@pytest.fixture
def store(backend_url: str | Path) -> Iterator[SqlStore]:
    """A writable store on a fresh database of the parametrised backend."""
    opened = open_backend(backend_url)
    try:
        yield opened
    finally:
        opened.close()
