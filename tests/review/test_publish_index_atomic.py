"""A review's graph and its search documents are written in one transaction (REV-14).

The index write is made to fail for real: the database refuses every new search document
(a trigger, on SQLite and on PostgreSQL). The publish then leaves nothing behind — no
result, no graph, no checkpoint — and once the index takes documents again, resuming the
run publishes a graph whose every object is searchable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from proctor.errors import StoreError
from proctor.ingest import ingest
from proctor.review import ReviewRequest, resume_review, start_review
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from tests.conftest import EXAMPLES_DIR

REFUSED = "search index refused by the test"

_REFUSE = {
    "sqlite": [
        "CREATE TRIGGER refuse_search_documents BEFORE INSERT ON search_documents "
        f"BEGIN SELECT RAISE(ABORT, '{REFUSED}'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION refuse_search_documents() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN RAISE EXCEPTION '{REFUSED}'; END $$",
        "CREATE TRIGGER refuse_search_documents BEFORE INSERT ON search_documents "
        "FOR EACH ROW EXECUTE FUNCTION refuse_search_documents()",
    ],
}
_ACCEPT = {
    "sqlite": ["DROP TRIGGER refuse_search_documents"],
    "postgresql": [
        "DROP TRIGGER refuse_search_documents ON search_documents",
        "DROP FUNCTION refuse_search_documents()",
    ],
}


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [EXAMPLES_DIR])
    return store


def _run_statements(store: SqlStore, statements: dict[str, list[str]]) -> None:
    with store._write() as connection:
        for statement in statements[connection.dialect.name]:
            connection.execute(text(statement))


def _count(store: SqlStore, table: object) -> int:
    with store._read() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())  # type: ignore[arg-type]


def test_a_publish_whose_index_write_fails_leaves_no_published_result(store: SqlStore) -> None:
    _run_statements(store, _REFUSE)
    # SQLite's RAISE(ABORT) is a refused write (StoreError); PostgreSQL's RAISE EXCEPTION
    # a database error, passed on as it is.
    with pytest.raises((StoreError, DBAPIError), match=REFUSED):
        start_review(store, ReviewRequest(), semantic=None)
    (run,) = store.review_runs()
    assert run.status == "failed"
    assert run.result_id is None
    assert REFUSED in (run.error or "")
    for table in (t.results, t.entities, t.graph_events, t.story_lines, t.result_objects):
        assert _count(store, table) == 0, table.name
    assert store.checkpoint_count() == 0
    assert _count(store, t.search_documents) == 0

    _run_statements(store, _ACCEPT)
    resumed = resume_review(store, run.run_id, semantic=None)
    assert resumed.status == "completed"
    assert resumed.result_id is not None
    with store._read() as connection:
        objects = [
            f"{kind}:{object_id}"
            for kind, object_id in connection.execute(
                select(t.result_objects.c.object_type, t.result_objects.c.object_id).where(
                    t.result_objects.c.result_id == resumed.result_id,
                    t.result_objects.c.object_type.in_(("entity", "event", "story_line")),
                )
            )
        ]
        indexed = set(connection.execute(select(t.search_documents.c.doc_key)).scalars())
    assert objects
    assert set(objects) <= indexed
