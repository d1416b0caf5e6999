"""The search index's freshness check (on every search, and every catch-up of the
server's background indexer) stays cheap however many sources the store holds: it reads
the index on (source_type, updated_at), not every source row."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import event, inspect

from proctor.search import index_full_text
from proctor.search._index import full_text_behind
from proctor.store import SqlStore
from tests.search.helpers import FRIENDS, dialogue, write

INDEX = "ix_sources_source_type_updated_at"


def _checked_statements(store: SqlStore) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cursor: Any, sql: str, params: Any, _ctx: Any, _many: bool) -> None:
        seen.append((sql, params))

    with store._read() as connection:
        event.listen(connection, "before_cursor_execute", record)
        try:
            full_text_behind(connection)
        finally:
            event.remove(connection, "before_cursor_execute", record)
    return seen


def test_the_sources_are_indexed_by_type_and_update_time_on_every_backend(
    store: SqlStore,
) -> None:
    indexes = {i["name"]: i["column_names"] for i in inspect(store._reader).get_indexes("sources")}
    assert indexes.get(INDEX) == ["source_type", "updated_at"]


def test_the_freshness_check_reads_the_sources_index_alone_never_their_rows(
    sqlite_store: SqlStore,
) -> None:
    for n in range(3):
        write(sqlite_store, dialogue(f"c{n}", FRIENDS, project=f"p{n % 2}"))
    index_full_text(sqlite_store)
    seen = _checked_statements(sqlite_store)
    plans: list[str] = []
    with sqlite_store._read() as connection:
        for sql, params in seen:
            if re.search(r"\bFROM sources\b", sql):
                # The one statement reads other tables too: what it does with sources.
                plans += [
                    r[3]
                    for r in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params)
                    if re.search(r"\b(SCAN|SEARCH) sources\b", r[3])
                ]
    assert plans, seen
    assert all(f"COVERING INDEX {INDEX}" in plan for plan in plans), plans


def test_the_freshness_check_still_sees_a_new_and_a_revised_source(sqlite_store: SqlStore) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS[:4]))
    index_full_text(sqlite_store)
    with sqlite_store._read() as connection:
        assert not full_text_behind(connection)
    write(sqlite_store, dialogue("c1", FRIENDS[:5]))  # one more turn
    with sqlite_store._read() as connection:
        assert full_text_behind(connection)
    index_full_text(sqlite_store)
    revised = [(a, t + " (edited)") if i == 0 else (a, t) for i, (a, t) in enumerate(FRIENDS[:5])]
    write(sqlite_store, dialogue("c1", revised))
    with sqlite_store._read() as connection:
        assert full_text_behind(connection)
