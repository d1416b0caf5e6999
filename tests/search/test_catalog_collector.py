"""A held catalog costs the cyclic garbage collector nothing after it is loaded: its
per-document columns are tuples of strings, numbers and None (untracked at their first
collection, where lists of every document were walked by every full collection: 25–55 ms
of a search on the 1 GB store), and in a server (``mark_long_lived``) what is alive after a
load is frozen."""

from __future__ import annotations

import gc

import pytest

from proctor._util import collector
from proctor.search import index_full_text
from proctor.search._catalog import load_catalog
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write
from tests.search.test_vectors import WordEncoder


@pytest.fixture
def indexed(sqlite_store: SqlStore) -> SqlStore:
    write(sqlite_store, dialogue("c", [("Ann", f"turn {n} about w{n % 7}x") for n in range(50)]))
    index_full_text(sqlite_store)
    return sqlite_store


def test_the_catalogs_columns_leave_the_collectors_care(indexed: SqlStore) -> None:
    rows = load_catalog(indexed, WordEncoder()).rows
    gc.collect()
    columns = (rows.doc_types, rows.projects, rows.conversations, rows.positions, rows.authors)
    assert all(len(column) == len(rows.row_ids) for column in columns)
    assert not any(gc.is_tracked(column) for column in columns)


def test_a_long_lived_process_freezes_what_a_load_left_alive(
    indexed: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *_: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(collector, "_long_lived", False)  # a process no server marked
    load_catalog(indexed, WordEncoder())
    assert calls == []  # not marked: nothing frozen
    monkeypatch.setattr(collector, "_long_lived", True)
    load_catalog(indexed, WordEncoder())
    assert calls == []  # nothing loaded: the held catalog answered
    write(indexed, dialogue("d", [("Bo", "one more turn about w1x")]))
    index_full_text(indexed)
    catalog = load_catalog(indexed, WordEncoder())  # reloaded: a new document
    assert calls == ["collect", "freeze"]  # collected first: no garbage is frozen
    assert "d" in catalog.rows.conversations


def test_the_signature_follows_what_counting_the_documents_gives(indexed: SqlStore) -> None:
    """On SQLite the catalog's signature reads FTS5's own count of the documents instead of
    counting them: the same number after documents are added and removed."""
    from sqlalchemy import delete, func, select

    from proctor.search._catalog import _signature
    from proctor.store import tables as t

    d = t.search_documents

    def both() -> tuple[tuple[object, ...], int]:
        with indexed.repos.search.read() as connection:
            counted = connection.execute(select(func.count()).select_from(d)).scalar_one()
            return _signature(connection, "m"), int(counted)

    first, counted = both()
    assert first[0] == counted
    write(indexed, dialogue("d", [("Bo", "more"), ("Ann", "and more")]))
    index_full_text(indexed)
    added, counted = both()
    assert added[0] == counted == first[0] + 2
    with indexed.repos.search.write() as connection:
        connection.execute(
            delete(d).where(d.c.row_id == select(func.min(d.c.row_id)).scalar_subquery())
        )
    removed, counted = both()
    assert removed[0] == counted == added[0] - 1
    assert removed != added
