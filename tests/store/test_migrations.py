"""Migrations: applied on open, equal to the schema description, refusing unknown revisions.

New files are opened with the real ``open_store`` (``open_real_store``): elsewhere a test's new
store starts as a copy of a migrated template (``tests/backends.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from proctor.errors import MigrationError
from proctor.store._engine import head_revision
from proctor.store._schema import is_search_fts_table, metadata
from tests.backends import open_real_store
from tests.store.conftest import open_backend


def test_opening_a_new_database_creates_every_table_at_the_head_revision(tmp_path: Path) -> None:
    store = open_real_store(tmp_path / "new.db")
    store.close()
    engine = create_engine(f"sqlite:///{tmp_path / 'new.db'}")
    with engine.connect() as connection:
        tables = {n for n in inspect(connection).get_table_names() if not is_search_fts_table(n)}
        assert tables == set(metadata.tables) | {"alembic_version"}
        assert (
            connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
            == head_revision()
        )
        assert connection.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
    engine.dispose()


def _described(name: str | None, _kind: str, _parent: object) -> bool:
    """Not the derived search index the description cannot state: SQLite's FTS5 tables
    (migration 0005), PostgreSQL's stored tsvector column and its GIN index (0010)."""
    return not is_search_fts_table(name) and name not in {
        "search_vector",
        "ix_search_documents_search_vector",
    }


def test_the_migrations_produce_exactly_the_described_schema(backend_url: str | Path) -> None:
    open_backend(backend_url).close()
    is_file = isinstance(backend_url, Path)
    engine = create_engine(f"sqlite:///{backend_url}" if is_file else str(backend_url))
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"include_name": _described})
        differences = compare_metadata(context, metadata)
    engine.dispose()
    assert differences == []


def test_reopening_a_current_database_changes_nothing(tmp_path: Path) -> None:
    open_real_store(tmp_path / "p.db").close()
    before = (tmp_path / "p.db").read_bytes()
    open_real_store(tmp_path / "p.db").close()
    assert (tmp_path / "p.db").read_bytes() == before


def test_a_database_from_a_newer_proctor_is_refused_and_left_alone(tmp_path: Path) -> None:
    open_real_store(tmp_path / "p.db").close()
    engine = create_engine(f"sqlite:///{tmp_path / 'p.db'}")
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    engine.dispose()
    with pytest.raises(MigrationError, match="newer than this Proctor knows"):
        open_real_store(tmp_path / "p.db")
    engine = create_engine(f"sqlite:///{tmp_path / 'p.db'}")
    with engine.connect() as connection:
        assert (
            connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
            == "9999_future"
        )
    engine.dispose()


def test_a_read_only_open_of_a_missing_database_says_what_to_do(tmp_path: Path) -> None:
    from proctor.errors import StoreError

    with pytest.raises(StoreError, match="proctor init"):
        open_real_store(tmp_path / "missing.db", read_only=True)
