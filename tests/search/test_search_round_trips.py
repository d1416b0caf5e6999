"""A search costs few round trips: on PostgreSQL each statement and each transaction is one
(issue 16: the PostgreSQL pass spent 20 ms a full-text search on seven statements in three
transactions), and the ranking statement gives the scores the two-statement form gave."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, Pool, event, literal, select

from proctor.search import index_full_text, search
from proctor.search._index import freshness
from proctor.search._query import _idf, _idf_sql
from proctor.store import SqlStore
from tests.search.helpers import FRIENDS, dialogue, write

_TRANSACTION = ("BEGIN", "ROLLBACK", "COMMIT")


def _statements(action: Any) -> tuple[list[str], int]:
    """The statements ``action()`` runs (transaction control aside) and the connections it
    takes from a pool."""
    statements: list[str] = []
    checkouts: list[object] = []

    def record(_c: Any, _cursor: Any, sql: str, *_: Any) -> None:
        if not sql.lstrip().upper().startswith(_TRANSACTION):
            statements.append(sql)

    def checkout(*_: Any) -> None:
        checkouts.append(True)

    event.listen(Engine, "before_cursor_execute", record)
    event.listen(Pool, "checkout", checkout)
    try:
        action()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
        event.remove(Pool, "checkout", checkout)
    return statements, len(checkouts)


def _round_trips(store: SqlStore, statements: list[str]) -> list[str]:
    """The statements that would be round trips to a server: SQLite, in process, also
    reads its data version (unchanged data is not counted again: ``_unchanged.py``) and
    FTS5's row count (a question of several words: ``_fts5_top.py``)."""
    if store.dialect != "sqlite":
        return statements
    return [s for s in statements if s != "PRAGMA data_version" and "search_fts_data" not in s]


def test_a_full_text_search_is_three_statements_in_one_transaction(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS))
    index_full_text(store)
    found: list[Any] = []
    statements, checkouts = _statements(
        lambda: found.append(search(store, "Where did Melanie paint the lake?", encoder=None))
    )
    (result,) = found
    assert result.hits and result.hits[0].doc_id == "c1:t3"
    assert result.index.full_text_current and result.index.documents == len(FRIENDS)
    # The ranking, the freshness check (with the document count) and the hits.
    assert len(_round_trips(store, statements)) == 3, statements
    assert checkouts == 1


def test_the_freshness_check_is_one_statement_and_sees_a_new_turn(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS[:4]))
    index_full_text(store)

    def check() -> tuple[bool, int | None]:
        with store.repos.search.read() as connection:
            fresh = freshness(connection, count_documents=True)
        return fresh.behind, fresh.documents

    outcome: list[tuple[bool, int | None]] = []
    statements, _ = _statements(lambda: outcome.append(check()))
    assert outcome == [(False, 4)]
    assert len(_round_trips(store, statements)) == 1, statements
    write(store, dialogue("c1", FRIENDS[:5]))
    assert check() == (True, 4)
    index_full_text(store)
    assert check() == (False, 5)


@pytest.mark.parametrize("documents", [1, 2, 7, 100, 2_760, 123_457])
def test_postgres_computes_the_inverse_document_frequency_exactly_as_python(
    store: SqlStore, documents: int
) -> None:
    if store.dialect != "postgresql":
        pytest.skip("the ranking statement computes it in SQL on PostgreSQL only")
    frequencies = sorted({0, 1, 2, documents // 3, documents // 2, documents - 1, documents})
    with store.repos.search.read() as connection:
        for frequency in frequencies:
            value = connection.execute(
                select(_idf_sql(literal(documents), literal(frequency)))
            ).scalar_one()
            assert value == _idf(documents, frequency), (documents, frequency)
