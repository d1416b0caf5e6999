"""The PostgreSQL pass's databases (tests/backends.py): every store a test opens gets a fresh
copy of the migrated template, made ahead by a thread, never handed out twice, and every
database is gone once the session ends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.backends import PostgresDatabases, _postgres_admin_url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        not os.environ.get("PROCTOR_TEST_POSTGRES_URL", "").strip(),
        reason="needs PROCTOR_TEST_POSTGRES_URL (make test sets it)",
    ),
]


def _databases_of(databases: PostgresDatabases) -> set[str]:
    with databases.admin().connect() as connection:
        rows = connection.execute(
            text("SELECT datname FROM pg_database WHERE datname LIKE :prefix"),
            {"prefix": f"pt_{databases.session}_%"},
        )
        return {name for (name,) in rows}


def _conversations(url: str) -> int:
    from proctor.store._store import open_store

    store = open_store(url=url)
    try:
        return len(store.list_conversations())
    finally:
        store.close()


def test_each_path_gets_its_own_fresh_migrated_copy_and_the_session_leaves_none(
    tmp_path: Path,
) -> None:
    databases = PostgresDatabases(_postgres_admin_url())
    try:
        urls = [databases.ensure(tmp_path / f"{n}.db") for n in range(5)]
        assert len(set(urls)) == 5
        assert databases.ensure(tmp_path / "0.db") == urls[0]  # the same path, the same one
        assert all(_conversations(url) == 0 for url in urls)
        databases.copy(tmp_path / "0.db", tmp_path / "copy.db")
        assert databases.exists(tmp_path / "copy.db")
        databases.drop_under(tmp_path)
        assert not databases.exists(tmp_path / "0.db")
        again = databases.ensure(tmp_path / "0.db")  # a path made again: a new database
        assert again not in urls
    finally:
        databases.drop_all()
    try:
        assert _databases_of(databases) == set()
    finally:
        databases.drop_all()  # disposes the engine that looked
