"""The store contract suite runs on every backend: SQLite always, PostgreSQL when a server is given.

Set ``PROCTOR_TEST_POSTGRES_URL`` to an admin URL (``.ci/run`` starts a local server and
sets it); each test then gets a fresh database, a copy of a migrated template, that is
dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url

from proctor.store import SqlStore, open_store
from proctor.store._store import open_store as open_real_store

POSTGRES_URL = os.environ.get("PROCTOR_TEST_POSTGRES_URL")


_TEMPLATES: dict[str, str] = {}
"""The migrated template database of this test process, by admin URL."""


def migrated_template(config: pytest.Config, admin_url: URL) -> str:
    """A PostgreSQL database migrated to the newest schema, made once per test process (and
    dropped when it ends) to be copied for each test (``CREATE DATABASE … TEMPLATE``):
    running every migration for each test's database took most of its time."""
    key = admin_url.render_as_string(hide_password=False)
    if key not in _TEMPLATES:
        name = f"proctor_test_template_{uuid.uuid4().hex[:12]}"
        admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))

        def drop() -> None:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()

        config.add_cleanup(drop)
        open_real_store(
            url=admin_url.set(database=name).render_as_string(hide_password=False)
        ).close()
        _TEMPLATES[key] = name
    return _TEMPLATES[key]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    """A fresh database for each backend: a SQLite path or a PostgreSQL URL.

    Either starts migrated to the newest schema, as a new store a test opens does elsewhere
    (the SQLite path through ``tests/backends.py``, the PostgreSQL database as a copy of
    ``migrated_template``), except in ``test_migrations``, whose databases start empty and
    are migrated the real way.
    """
    if request.param == "sqlite":
        yield tmp_path / "proctor.db"
        return
    if not POSTGRES_URL:
        pytest.skip(
            "PostgreSQL backend: set PROCTOR_TEST_POSTGRES_URL (make test does when a server is available)"
        )
    admin_url = make_url(POSTGRES_URL).set(drivername="postgresql+psycopg")
    migrated = not request.module.__name__.endswith(".test_migrations")
    template = f' TEMPLATE "{migrated_template(request.config, admin_url)}"' if migrated else ""
    name = f"proctor_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"{template}'))
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
