"""An import's batch writes on the driver's cursor; every other writer through SQLAlchemy.

Inside ``store.import_batch()`` the writer's statements skip SQLAlchemy's per-statement
bookkeeping (``store/_bulk.py``: ``direct_writes``, ``run_driver``) yet stay in the batch's
one transaction; outside it (a live append, a graph publish, search) the same helpers go
through ``Connection.exec_driver_sql``, whose events tests and tools observe.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event

from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store import _schema as t
from proctor.store._bulk import direct_writes, insert_rows, run_driver
from tests.builders import conversation_bundle

_NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _statements(store: SqlStore) -> list[str]:
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(" ".join(statement.split()[:3]).upper())

    event.listen(store._writer, "before_cursor_execute", record)
    return sent


def test_a_batch_writes_on_the_driver_s_cursor_in_its_transaction(store: SqlStore) -> None:
    sent = _statements(store)

    def fail_mid_batch() -> None:
        with store.import_batch() as batch:
            batch.write_conversation(prepare_bundle(conversation_bundle("test:gone", messages=3)))
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        fail_mid_batch()
    assert not store.existing_conversation_ids(["test:gone"])  # rolled back with the batch
    with store.import_batch() as batch:
        batch.write_conversation(prepare_bundle(conversation_bundle("test:kept", messages=3)))
    assert len(store.transcript("test:kept").messages) == 3
    # Only the project lookups (``project_for``, ``ensure_project``) still go through
    # SQLAlchemy's statements; the savepoints, reads and inserts of the conversation do not.
    assert sent, "the listener sees the engine's statements"
    assert not [
        s
        for s in sent
        if s.startswith(("SAVEPOINT", "RELEASE", "INSERT INTO MESSAGES", "INSERT INTO SOURCES"))
        or "HEADER_HASH" in s
    ]


def test_outside_a_batch_the_helpers_go_through_sqlalchemy(store: SqlStore) -> None:
    sent = _statements(store)
    with store._writer.begin() as connection:
        rows = run_driver(connection, "SELECT count(*) FROM projects")
        insert_rows(
            connection,
            t.projects,
            [{"project_id": "p1", "name": "one", "status": "active", "created_at": _NOW}],
        )
    assert rows == [(0,)]
    assert "SELECT COUNT(*) FROM" in sent
    assert any(s.startswith("INSERT INTO PROJECTS") for s in sent)


def test_the_driver_s_refusal_is_raised_as_sqlalchemy_s(store: SqlStore) -> None:
    from sqlalchemy.exc import IntegrityError

    row = {"project_id": "p1", "name": "one", "status": "active", "created_at": _NOW}
    with pytest.raises(IntegrityError), store._writer.begin() as connection, direct_writes():
        insert_rows(connection, t.projects, [row, row])
