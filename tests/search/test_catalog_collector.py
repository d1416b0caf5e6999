"""A held catalog costs the cyclic garbage collector nothing after it is loaded: its
per-document columns are tuples of strings, numbers and None (untracked at their first
collection, where lists of every document were walked by every full collection: 25–55 ms
of a search on the 1 GB store), and in a server (``mark_long_lived``) what is alive after a
load is frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

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


@pytest.fixture
def unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()


def test_the_catalogs_columns_leave_the_collectors_care(indexed: SqlStore) -> None:
    rows = load_catalog(indexed, WordEncoder()).rows
    gc.collect()
    columns = (rows.doc_types, rows.projects, rows.conversations, rows.positions, rows.authors)
    assert all(len(column) == len(rows.row_ids) for column in columns)
    assert not any(gc.is_tracked(column) for column in columns)


def test_a_long_lived_process_freezes_what_a_load_left_alive(
    indexed: SqlStore, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    before = gc.get_freeze_count()
    load_catalog(indexed, WordEncoder())
    assert gc.get_freeze_count() == before  # not marked: nothing frozen
    write(indexed, dialogue("d", [("Bo", "one more turn about w1x")]))
    index_full_text(indexed)
    monkeypatch.setattr(collector, "_long_lived", True)
    catalog = load_catalog(indexed, WordEncoder())  # reloaded: a new document
    assert gc.get_freeze_count() > before
    assert gc.get_count()[2] == 0  # collected first: nothing left to the oldest generation
    assert "d" in catalog.rows.conversations
