"""Planner statistics after large writes: the query planner sees tables as they now are.

A store is never analysed on its own: SQLite keeps no statistics until ``ANALYZE`` runs,
and without them it may pick an index that serves a query's order over one that serves
its filter (a review's manifest page scanned the whole run for every batch). PostgreSQL's
autovacuum analyses eventually, not right after a review wrote 100,000 rows.

``refresh_statistics`` analyses named tables in the caller's transaction. On SQLite each
index is sampled (``analysis_limit``), so the cost stays a few milliseconds a table
whatever its size; PostgreSQL samples on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Connection

from proctor.store import _schema as t

LARGE_WRITE_ROWS = 1_000
"""A write of at least this many rows refreshes the statistics of the tables it wrote.

5,000 left a publish of 1,200 events (about 3,600 rows) into a new PostgreSQL store to
autovacuum: the first pages of its graph were planned for empty tables and took 8-11 s
each instead of 0.25 s (``tests/store/test_graph_statements.py``), until autovacuum came
by. Analysing the nine graph tables there took milliseconds."""

SQLITE_ANALYSIS_LIMIT = 1_000
"""Rows SQLite samples per index when it analyses (0 would read every row)."""


def refresh_statistics(conn: Connection, tables: Sequence[str]) -> None:
    """Analyse ``tables`` (names from the schema) in the caller's transaction."""
    unknown = [name for name in tables if name not in t.metadata.tables]
    if unknown:
        raise ValueError(f"no table {unknown[0]!r} in the schema to analyse")
    if not tables:
        return
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"PRAGMA analysis_limit={SQLITE_ANALYSIS_LIMIT}")
        for name in tables:
            conn.exec_driver_sql(f'ANALYZE "{name}"')
        return
    conn.exec_driver_sql("ANALYZE " + ", ".join(f'"{name}"' for name in tables))
