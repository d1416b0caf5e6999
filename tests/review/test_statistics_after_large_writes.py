"""A review that writes many rows refreshes the planner's statistics of those tables.

Without statistics SQLite chose the primary key over the batch index for a manifest page
and scanned the whole run for every batch. A manifest or a publish of at least
``LARGE_WRITE_ROWS`` rows analyses the tables it grew, in its own transaction (SQLite:
``sqlite_stat1`` rows; PostgreSQL: ``pg_class.reltuples`` set); a small one does not.
The threshold is lowered here so the example sessions count as large.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore, _graph_publish, _review_store, open_store
from proctor.store._statistics import refresh_statistics
from tests.conftest import EXAMPLES_DIR


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [EXAMPLES_DIR])
    return store


def _analysed(store: SqlStore) -> set[str]:
    """Tables the planner has statistics for."""
    with store._read() as conn:
        if store.dialect == "sqlite":
            known = conn.execute(
                text("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
            ).first()
            if known is None:
                return set()
            return {str(r[0]) for r in conn.execute(text("SELECT DISTINCT tbl FROM sqlite_stat1"))}
        rows = conn.execute(
            text("SELECT relname FROM pg_class WHERE relkind = 'r' AND reltuples >= 0")
        )
        return {str(r[0]) for r in rows}


def _review(store: SqlStore) -> None:
    run = start_review(store, ReviewRequest(), semantic=None, semantic_note="none")
    assert run.status == "completed"


def test_a_large_review_analyses_its_manifest_and_the_graph_tables(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_review_store, "LARGE_WRITE_ROWS", 10)
    monkeypatch.setattr(_graph_publish, "LARGE_WRITE_ROWS", 10)
    before = _analysed(store)
    _review(store)
    grown = _analysed(store) - before
    assert {"review_manifest", "graph_events", "source_refs", "review_checkpoints"} <= grown


def test_a_small_review_leaves_the_statistics_alone(store: SqlStore) -> None:
    before = _analysed(store)
    _review(store)
    assert "review_manifest" not in _analysed(store) - before


def test_only_tables_of_the_schema_can_be_analysed(store: SqlStore) -> None:
    with store._write() as conn, pytest.raises(ValueError, match="no table 'sources; DROP'"):
        refresh_statistics(conn, ["sources; DROP"])
