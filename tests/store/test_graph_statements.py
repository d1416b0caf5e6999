"""A graph page and a story list read in the same statements however many events they
hold: the ids a read has collected go to the database as one bound list (``among``:
``json_each`` on SQLite, ``= ANY`` on PostgreSQL), not in ``IN`` chunks of 500, and each
statement's length does not grow with them either."""

from __future__ import annotations

import pytest

from proctor.store import SqlStore
from tests.store.graph_drafts import add_conversation
from tests.store.test_graph_window import CONVERSATION, publish, statements, timeline


@pytest.fixture
def project_id(store: SqlStore) -> str:
    """The project of a stored conversation, in the store of each backend (conftest)."""
    return add_conversation(store, CONVERSATION)


def test_a_page_reads_in_the_same_statements_for_three_events_or_a_thousand(
    store: SqlStore, project_id: str
) -> None:
    result = publish(store, timeline(project_id, 1_200))

    def read(limit: int, line: str | None = None) -> list[str]:
        with statements(store) as seen:
            view = store.graph(result.result_id, line, limit=limit, offset=1)
        assert len(view.events) == limit
        return [sql for sql, _ in seen]

    small, large = read(3), read(1_100)
    assert len(small) == len(large)
    assert [len(sql) for sql in small] == [len(sql) for sql in large]  # no placeholder per id
    line = store.stories(project_id)[0].story_line_id  # 600 events
    assert [len(sql) for sql in read(3, line)] == [len(sql) for sql in read(550, line)]


def test_a_story_list_reads_in_the_same_statements_for_ten_events_or_a_thousand(
    store: SqlStore, project_id: str
) -> None:
    publish(store, timeline(project_id, 10))
    with statements(store) as seen:
        before = store.stories(project_id)
    first = [sql for sql, _ in seen]
    publish(store, timeline(project_id, 1_200))  # the same two lines, continued
    with statements(store) as seen:
        after = store.stories(project_id)
    assert [len(sql) for sql in first] == [len(sql) for sql, _ in seen]
    assert sum(len(line.event_ids) for line in before) == 10
    assert sum(len(line.event_ids) for line in after) > 1_000
