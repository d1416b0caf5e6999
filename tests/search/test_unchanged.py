"""A search of an unchanged SQLite store does not count the index again (``_unchanged.py``),
and still sees at once what another connection or another process wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from proctor.search import index_full_text, search
from proctor.search._catalog import _signature
from proctor.search._index import freshness
from proctor.search._unchanged import data_version
from proctor.search._vectors import _index_signature
from proctor.store import SqlStore
from tests.backends import open_real_store
from tests.search.helpers import FRIENDS, dialogue, write

ROOT = Path(__file__).resolve().parents[2]

_ANOTHER_PROCESS = """
import sys
from proctor.search import index_full_text
from tests.backends import open_real_store
from tests.search.helpers import FRIENDS, dialogue, write
store = open_real_store(sys.argv[1])
write(store, dialogue("c2", [*FRIENDS[:2], ("Melanie", "We saw a zeppelin over the lake.")]))
if sys.argv[2] == "index":
    index_full_text(store)
store.close()
"""


def _in_another_process(database: Path, *, index: bool) -> None:
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    subprocess.run(
        [sys.executable, "-c", _ANOTHER_PROCESS, str(database), "index" if index else "-"],
        check=True,
        env=env,
        cwd=ROOT,
    )


def _statements(store: SqlStore, ask: Any) -> tuple[Any, list[str]]:
    seen: list[str] = []

    def record(_c: Any, _cursor: Any, sql: str, *_: Any) -> None:
        seen.append(sql)

    with store.repos.search.read() as connection:
        event.listen(connection, "before_cursor_execute", record)
        try:
            answer = ask(connection)
        finally:
            event.remove(connection, "before_cursor_execute", record)
    return answer, seen


def _indexed(tmp_path: Path) -> SqlStore:
    store = open_real_store(tmp_path / "proctor.db")
    write(store, dialogue("c1", FRIENDS))
    index_full_text(store)
    return store


def test_an_unchanged_store_is_not_counted_again(tmp_path: Path) -> None:
    store = _indexed(tmp_path)
    try:
        asks = [
            lambda c: freshness(c, count_documents=True),
            lambda c: _signature(c, "model"),
            _index_signature,
        ]
        for ask in asks:
            first, counted = _statements(store, ask)
            again, seen = _statements(store, ask)
            assert again == first
            assert [sql for sql in counted if sql not in ("BEGIN", "PRAGMA data_version")]
            assert [sql for sql in seen if sql != "BEGIN"] == ["PRAGMA data_version"], seen
    finally:
        store.close()


def test_a_write_by_another_connection_is_seen_by_the_next_search(tmp_path: Path) -> None:
    store = _indexed(tmp_path)
    other = open_real_store(tmp_path / "proctor.db")
    try:
        before, _ = _statements(store, lambda c: freshness(c, count_documents=True))
        assert not before.behind
        write(other, dialogue("c2", [("Melanie", "We saw a zeppelin over the lake.")]))
        after, _ = _statements(store, lambda c: freshness(c, count_documents=True))
        assert after.behind
        index_full_text(other)
        indexed, _ = _statements(store, lambda c: freshness(c, count_documents=True))
        assert not indexed.behind and indexed.documents == (before.documents or 0) + 1
        assert [h.doc_id for h in search(store, "zeppelin", encoder=None).hits] == ["c2:t0"]
    finally:
        other.close()
        store.close()


@pytest.mark.slow
def test_a_write_by_another_process_is_seen_by_the_next_search(tmp_path: Path) -> None:
    store = _indexed(tmp_path)
    try:
        first = search(store, "zeppelin lake", encoder=None)
        signature, _ = _statements(store, _index_signature)
        assert "zeppelin" not in " ".join(h.excerpt for h in first.hits)
        _in_another_process(tmp_path / "proctor.db", index=False)
        assert search(store, "zeppelin lake", encoder=None).index.full_text_current is False
        _in_another_process(tmp_path / "proctor.db", index=True)
        found = search(store, "zeppelin lake", encoder=None)
        assert found.index.full_text_current
        assert found.index.documents == first.index.documents + 3
        assert found.hits[0].excerpt == "We saw a zeppelin over the lake."
        assert _statements(store, _index_signature)[0] != signature
    finally:
        store.close()


def test_a_connection_that_wrote_keeps_no_answers(sqlite_store: SqlStore) -> None:
    with sqlite_store.repos.search.write() as connection:
        connection.execute(text("DELETE FROM search_state WHERE name = 'nothing'"))
        connection.execute(
            text(
                "INSERT INTO search_state (name, value, updated_at) "
                "VALUES ('probe', '1', CURRENT_TIMESTAMP)"
            )
        )
        assert data_version(connection) is None
    with sqlite_store.repos.search.read() as connection:
        assert data_version(connection) is not None


@pytest.mark.slow
def test_a_pass_over_an_unchanged_store_counts_nothing_and_sees_another_process(
    tmp_path: Path,
) -> None:
    store = _indexed(tmp_path)
    try:
        seen: list[str] = []

        def record(_c: Any, _cursor: Any, sql: str, *_: Any) -> None:
            seen.append(sql)

        index_full_text(store)  # this connection's first answers
        event.listen(store._reader, "before_cursor_execute", record)
        try:
            assert index_full_text(store).added == 0
            assert [s for s in seen if s != "BEGIN"] == ["PRAGMA data_version"], seen
            _in_another_process(tmp_path / "proctor.db", index=False)
            assert index_full_text(store).added == 3
        finally:
            event.remove(store._reader, "before_cursor_execute", record)
    finally:
        store.close()


def test_searches_one_after_another_keep_using_one_connection(tmp_path: Path) -> None:
    """A search's own connection comes back to the pool after its helper's (the half of
    the full text ranked beside it): the read pool hands out the connection returned last,
    so the next search's answers kept per connection are found, not counted again on the
    other connection."""
    from proctor.store import open_store

    _indexed(tmp_path).close()
    reader = open_store(tmp_path / "proctor.db", read_only=True)
    try:
        engine = reader.repos.search.read
        with engine() as own:
            mine = own.connection.dbapi_connection
            with own.engine.connect() as helper:  # the helper's, returned first
                helpers = helper.connection.dbapi_connection
            assert helpers is not mine
        with engine() as next_search:
            assert next_search.connection.dbapi_connection is mine
            freshness(next_search, count_documents=True)
        _, seen = _statements(reader, lambda c: freshness(c, count_documents=True))
        assert [sql for sql in seen if sql != "BEGIN"] == ["PRAGMA data_version"], seen
    finally:
        reader.close()


def test_the_index_status_of_an_unchanged_store_is_not_counted_again(tmp_path: Path) -> None:
    """``GET /api/search/index`` (polled while a server's indexer works) reads the index's
    state through ``index_status``: on an unchanged store it reads the data version alone,
    and after another connection's write and pass it reports the new documents."""
    from proctor.search import index_status

    store = _indexed(tmp_path)
    other = open_real_store(tmp_path / "proctor.db")
    seen: list[str] = []

    def record(_c: Any, _cursor: Any, sql: str, *_: Any) -> None:
        seen.append(sql)

    try:
        before = index_status(store, encoder=None)
        assert before.full_text_current
        event.listen(store._reader, "before_cursor_execute", record)
        try:
            assert index_status(store, encoder=None) == before
            assert [s for s in seen if s != "BEGIN"] == ["PRAGMA data_version"], seen
        finally:
            event.remove(store._reader, "before_cursor_execute", record)
        write(other, dialogue("c2", [("Melanie", "We saw a zeppelin over the lake.")]))
        assert not index_status(store, encoder=None).full_text_current
        index_full_text(other)
        after = index_status(store, encoder=None)
        assert after.full_text_current and after.documents == before.documents + 1
    finally:
        other.close()
        store.close()
