"""Opening a store that is already at the newest schema does not import Alembic.

Alembic (and Mako, Pygments …) cost a short command like a no-change review about
400 ms under load to learn that nothing needs migrating. The head is read from the
migration files' own ``revision`` lines and compared with the database's recorded one;
only a database that needs migrating, or a migration chain that is not one plain chain,
goes through Alembic.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from proctor.store import _engine
from proctor.store._engine import head_revision
from tests.backends import database_env, open_real_store

OPEN_AND_REPORT = (
    "import sys; from proctor.store import open_store; open_store().close(); "
    "print(sorted(m for m in sys.modules if m.split('.')[0] in ('alembic', 'mako')))"
)


def test_the_plain_head_is_alembics_head() -> None:
    assert _engine._plain_head() == head_revision()


@pytest.mark.slow
def test_a_current_store_opens_without_importing_alembic(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = database_env(home)
    first = subprocess.run(
        [sys.executable, "-c", OPEN_AND_REPORT], env=env, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr  # created (or, on PostgreSQL, copied) current
    again = subprocess.run(
        [sys.executable, "-c", OPEN_AND_REPORT], env=env, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "[]"


def test_a_store_behind_the_head_is_still_migrated(tmp_path: Path) -> None:
    from alembic import command

    open_real_store(tmp_path / "old.db").close()
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as connection:  # back to the schema before migration 0015
        command.downgrade(_engine._alembic_config(connection), "0014")
    with engine.connect() as connection:
        behind = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert behind == "0014"
    open_real_store(tmp_path / "old.db").close()
    with engine.connect() as connection:
        revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        indexes = (
            connection.execute(
                text("SELECT name FROM sqlite_master WHERE tbl_name = 'review_manifest'")
            )
            .scalars()
            .all()
        )
    engine.dispose()
    assert revision == head_revision()
    assert "ix_review_manifest_run_id_batch_no_position" in indexes


@pytest.mark.parametrize("shape", ["two heads", "no revision line"])
def test_a_chain_that_is_not_plain_is_left_to_alembic(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions = tmp_path / "migrations" / "versions"
    versions.mkdir(parents=True)
    (versions / "0001_a.py").write_text('revision = "0001"\ndown_revision = None\n')
    (versions / "0002_b.py").write_text('revision = "0002"\ndown_revision = "0001"\n')
    if shape == "two heads":
        (versions / "0002_c.py").write_text('revision = "0002c"\ndown_revision = "0001"\n')
    else:
        (versions / "0003_d.py").write_text('"""no revision here"""\n')
    monkeypatch.setattr(_engine, "_MIGRATIONS", tmp_path / "migrations")
    assert _engine._plain_head() is None
