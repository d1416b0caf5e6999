"""A result's summary (read by every graph page) never reads the result's snapshot: on
SQLite ``created_at`` lies after ``snapshot`` in the row, and reading it from the row walks
every overflow page of the snapshot (megabytes for a large result), so it is read from
its index."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import event

from proctor.store import open_store
from tests.store.graph_drafts import add_conversation
from tests.store.test_graph_window import CONVERSATION, publish, timeline


def test_a_result_summary_reads_its_time_from_the_index_not_past_the_snapshot(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "proctor.db")
    result = publish(store, timeline(add_conversation(store, CONVERSATION), 40))
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cursor: Any, sql: str, params: Any, _ctx: Any, _many: bool) -> None:
        seen.append((sql, params))

    event.listen(store._reader, "before_cursor_execute", record)
    summary = store.result(result.result_id)
    event.remove(store._reader, "before_cursor_execute", record)
    store.close()
    assert summary == store_overview(tmp_path, result.result_id)
    assert summary.created_at is not None and summary.created_at.utcoffset() is not None
    (sql, params), *_ = [(sql, params) for sql, params in seen if "project_name" in sql]
    with sqlite3.connect(tmp_path / "proctor.db") as connection:
        plan = [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    assert any("COVERING INDEX ix_results_created_at" in step for step in plan), plan


def store_overview(folder: Path, result_id: str) -> Any:
    """The result as the results list reads it (every column from the row)."""
    store = open_store(folder / "proctor.db")
    try:
        (summary,) = [r for r in store.overview(None, limit=100) if r.result_id == result_id]
        return summary
    finally:
        store.close()
