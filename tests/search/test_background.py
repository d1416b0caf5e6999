"""Keeping the index current while a server runs (issue 16): full text on demand, embeddings
in the background, and answers that say when hits may be incomplete."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from proctor.errors import StoreError
from proctor.search import (
    BackgroundIndexer,
    IndexStatus,
    SearchDocument,
    SentenceEncoder,
    embed_pending,
    index_full_text,
    index_graph_objects,
    index_sources,
    index_status,
    load_encoder,
    search,
)
from proctor.search._catalog import Catalog, _catalogs, load_catalog
from proctor.search._write import CHUNK
from proctor.store import SqlStore
from proctor.store import _schema as t
from tests.search.conftest import needs_embeddings
from tests.search.helpers import FRIENDS, dialogue, write
from tests.store.conftest import open_backend

WAIT = 120.0
"""The longest a test waits for the background thread (it never sleeps)."""


@pytest.fixture
def indexer(store: SqlStore) -> Iterator[BackgroundIndexer]:
    """A full-text-only indexer on the test's store (embedding is tested on SQLite only)."""
    running = BackgroundIndexer(lambda: store, encoder=None, interval=60).start()
    try:
        yield running
    finally:
        running.stop()


def _documents(store: SqlStore, doc_type: str | None = None) -> int:
    d = t.search_documents
    statement = select(func.count()).select_from(d)
    if doc_type is not None:
        statement = statement.where(d.c.doc_type == doc_type)
    with store._read() as connection:
        return int(connection.execute(statement).scalar_one())


def test_a_catch_up_makes_messages_stored_since_searchable_at_once(
    store: SqlStore, indexer: BackgroundIndexer
) -> None:
    write(store, dialogue("c1", FRIENDS))
    assert indexer.catch_up(WAIT)
    write(store, dialogue("c2", [("Ann", "The quarterly zebrafinch audit starts Monday.")]))
    stale = search(store, "zebrafinch audit", encoder=None)
    assert stale.hits == () and not stale.index.full_text_current and stale.index.stale
    assert indexer.catch_up(WAIT)
    fresh = search(store, "zebrafinch audit", encoder=None)
    assert [hit.doc_id for hit in fresh.hits] == ["c2:t0"]
    assert fresh.index.full_text_current and not fresh.index.stale
    assert fresh.index.note() is None
    assert indexer.state.passes >= 2 and indexer.state.error is None


def test_the_thread_indexes_what_is_stored_without_any_search(
    store: SqlStore, indexer: BackgroundIndexer
) -> None:
    write(store, dialogue("c1", FRIENDS))
    assert indexer.wait_complete(WAIT)
    assert _documents(store, "message") == len(FRIENDS)
    assert index_status(store, encoder=None).full_text_current


def test_index_writers_in_several_processes_never_collide(store: SqlStore, backend: str) -> None:
    """Two stores on one database (two processes: ``serve`` and ``mcp``) index at once,
    while a third publishes graph objects: every write lands, none fails on a key."""
    for n in range(4):
        write(store, dialogue(f"c{n}", FRIENDS))
    location = Path(store.description) if backend == "sqlite" else store.database_url()
    others = [open_backend(location) for _ in range(2)]
    failures: list[BaseException] = []

    def index(target: SqlStore) -> None:
        try:
            for _ in range(3):
                index_full_text(target)
                write(target, dialogue(f"more-{id(target)}", FRIENDS[:3]))
        except BaseException as exc:  # recorded for the assertion below
            failures.append(exc)

    def publish() -> None:
        try:
            for n in range(20):
                index_graph_objects(store, [_entity(n), _entity(n)])
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=index, args=(other,)) for other in others]
    threads.append(threading.Thread(target=publish))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    for other in others:
        other.close()
    assert failures == []
    index_full_text(store)
    assert _documents(store, "message") == 4 * len(FRIENDS) + 2 * 3
    assert _documents(store, "entity") == 20


@pytest.fixture
def backend(store: SqlStore) -> str:
    return store.dialect


def _entity(n: int) -> SearchDocument:
    return SearchDocument(
        doc_type="entity",
        doc_id=f"e-{n}",
        project_id=None,
        title=f"Entity {n}",
        text="An entity a review published.",
        occurred_at=None,
    )


def test_a_full_text_pass_cut_short_keeps_its_chunks_and_finishes_later(
    store: SqlStore,
) -> None:
    turns = [("Dev", f"Message number {n} about the ledger.") for n in range(CHUNK + 40)]
    write(store, dialogue("long", turns))
    cut = index_full_text(store, seconds=0.0)
    assert not cut.complete and cut.added == 0
    assert not index_status(store, encoder=None).full_text_current
    finished = index_full_text(store)
    assert finished.complete and finished.added == len(turns)
    assert index_status(store, encoder=None).full_text_current


def test_an_indexer_that_cannot_open_the_store_says_why() -> None:
    def broken() -> SqlStore:
        raise StoreError("cannot open the database: unable to open database file")

    indexer = BackgroundIndexer(broken, encoder=None, interval=60).start()
    try:
        assert not indexer.catch_up(WAIT)
        assert indexer.state.error is not None and "unable to open" in indexer.state.error
        status = indexer.annotate(IndexStatus(documents=0, embedded=None, full_text_current=False))
        assert status.stale
        assert "the background indexer failed" in (status.note() or "")
    finally:
        indexer.stop()
    assert indexer.state.phase == "stopped"
    assert not indexer.catch_up(1.0), "a stopped indexer does nothing"


@needs_embeddings
def test_a_search_while_embedding_says_how_many_documents_are_embedded(
    sqlite_store: SqlStore,
) -> None:
    encoder = load_encoder()
    assert encoder is not None
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_full_text(sqlite_store)
    partial = embed_pending(sqlite_store, encoder, chunk=3, seconds=0.0)
    assert (partial.embedded, partial.remaining) == (3, len(FRIENDS) - 3)
    result = search(sqlite_store, "adopting a child")
    assert result.mode == "hybrid"
    assert (result.index.documents, result.index.embedded) == (len(FRIENDS), 3)
    assert result.index.stale and result.index.full_text_current
    assert f"3 of {len(FRIENDS)} documents have embeddings" in (result.index.note() or "")
    assert result.as_json()["index"]["stale"] is True
    # The turn that says it, not embedded yet, still ranks first by its words.
    assert result.hits[0].doc_id == "c1:t6"
    rest = embed_pending(sqlite_store, encoder)
    assert (rest.embedded, rest.remaining) == (len(FRIENDS) - 3, 0)
    done = search(sqlite_store, "adopting a child")
    assert done.index.embedded == len(FRIENDS) and not done.index.stale
    assert all(hit.similarity is not None for hit in done.hits)


@needs_embeddings
def test_the_indexer_embeds_everything_in_the_background(sqlite_store: SqlStore) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_graph_objects(sqlite_store, [_entity(1)])
    indexer = BackgroundIndexer(lambda: sqlite_store, interval=60).start()
    try:
        assert indexer.wait_complete(WAIT)
        state = indexer.state
    finally:
        indexer.stop()
    status = index_status(sqlite_store)
    assert (status.documents, status.embedded) == (len(FRIENDS) + 1, len(FRIENDS) + 1)
    assert not status.stale
    assert state.embedded == len(FRIENDS) + 1 and state.remaining == 0
    assert state.error is None and state.passes >= 1


@needs_embeddings
def test_the_in_memory_catalog_follows_the_index_as_a_fresh_load_would(
    sqlite_store: SqlStore,
) -> None:
    encoder = load_encoder()
    assert encoder is not None
    write(sqlite_store, dialogue("c1", FRIENDS))
    write(sqlite_store, dialogue("c2", FRIENDS[:4], project="other"))
    index_full_text(sqlite_store)
    embed_pending(sqlite_store, encoder, chunk=5, seconds=0.0)
    load_catalog(sqlite_store, encoder)
    # Documents added and removed, vectors added to documents already held.
    write(sqlite_store, dialogue("c3", [("Zed", "A brand new turn."), *FRIENDS[:2]]))
    sqlite_store.delete_conversation("c2")
    revised = list(FRIENDS)
    revised[2] = ("Caroline", "People shared recipes, it felt like a kitchen.")
    write(sqlite_store, dialogue("c1", revised))
    index_full_text(sqlite_store)
    embed_pending(sqlite_store, encoder, chunk=4, seconds=0.0)
    _same_as_a_fresh_load(sqlite_store, encoder)
    # Only vectors added: the documents stay, their vectors are read.
    embed_pending(sqlite_store, encoder, chunk=2, seconds=0.0)
    refreshed = _same_as_a_fresh_load(sqlite_store, encoder)
    assert 0 < refreshed.embedded < refreshed.documents


def _same_as_a_fresh_load(store: SqlStore, encoder: SentenceEncoder) -> Catalog:
    refreshed = load_catalog(store, encoder)
    _catalogs.pop(store)
    fresh = load_catalog(store, encoder)
    assert refreshed is not fresh
    assert refreshed.row_ids.tolist() == fresh.row_ids.tolist()
    assert refreshed.has_vector.tolist() == fresh.has_vector.tolist()
    assert (refreshed.vectors == fresh.vectors).all()
    assert refreshed.codes == fresh.codes
    assert refreshed.before.tolist() == fresh.before.tolist()
    assert refreshed.after.tolist() == fresh.after.tolist()
    assert refreshed.index_of == fresh.index_of
    assert {a: r.tolist() for a, r in refreshed.by_author.items()} == {
        a: r.tolist() for a, r in fresh.by_author.items()
    }
    return refreshed


def test_index_sources_still_does_both_to_the_end(sqlite_store: SqlStore) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    report = index_sources(sqlite_store, encoder=None)
    assert report.complete and report.added == len(FRIENDS)
    assert report.embeddings is not None, "says why nothing was embedded"
