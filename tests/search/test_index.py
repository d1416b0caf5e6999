"""Incremental indexing: unchanged → nothing rebuilt or embedded; changes and deletions follow."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text

from proctor.search import (
    SearchDocument,
    SourceRef,
    embed_pending,
    index_graph_objects,
    index_sources,
    load_encoder,
    remove_graph_objects,
    search,
)
from proctor.store import SqlStore
from proctor.store import _schema as t
from proctor.transcript import ToolCall
from tests.search.conftest import needs_embeddings
from tests.search.helpers import FRIENDS, dialogue, write


def _count(store: SqlStore, table: t.Table) -> int:
    with store._read() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def test_the_first_pass_indexes_every_message_and_tool_call(store: SqlStore) -> None:
    call = ToolCall(source_id="c1:call", name="Bash", arguments={"command": "ls paintings"})
    write(store, dialogue("c1", FRIENDS, calls=[call]))
    report = index_sources(store, encoder=None)
    assert (report.documents, report.added, report.updated, report.removed) == (9, 9, 0, 0)
    assert report.embeddings is not None
    assert _count(store, t.search_documents) == 9


def test_an_unchanged_store_is_not_reindexed(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS))
    index_sources(store, encoder=None)
    with store._read() as connection:
        before = connection.execute(select(t.search_documents.c.row_id)).scalars().all()
    again = index_sources(store, encoder=None)
    assert (again.added, again.updated, again.removed, again.embedded) == (0, 0, 0, 0)
    with store._read() as connection:
        assert connection.execute(select(t.search_documents.c.row_id)).scalars().all() == before


def test_an_unchanged_store_is_checked_in_a_few_statements(sqlite_store: SqlStore) -> None:
    from sqlalchemy import event

    write(sqlite_store, dialogue("c1", FRIENDS))
    index_sources(sqlite_store, encoder=None)
    statements: list[str] = []

    def count(*args: object) -> None:
        statements.append(str(args[2]))

    for engine in (sqlite_store._reader, sqlite_store._writer):
        event.listen(engine, "before_cursor_execute", count)
    assert index_sources(sqlite_store, encoder=None).documents == len(FRIENDS)
    # The graph's counts, the sources' signature, the conversations' and the one recorded,
    # in one read transaction, then the postings' state (FTS5's row count and what they
    # cover, ``_postings._STATE``) in one of their own: no document is read.
    assert len(statements) <= 7
    assert not [s for s in statements if "search_documents" in s]


def test_a_revised_message_is_reindexed_with_its_neighbours(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS))
    index_sources(store, encoder=None)
    revised = list(FRIENDS)
    revised[3] = ("Melanie", "I sculpted a clay bowl last weekend, want to see it?")
    write(store, dialogue("c1", revised))
    report = index_sources(store, encoder=None)
    # The turn itself and the two turns whose bodies quote it.
    assert (report.added, report.updated, report.removed) == (0, 3, 0)
    hits = search(store, "clay bowl", encoder=None).hits
    assert hits[0].doc_id == "c1:t3"
    assert not [h for h in search(store, "sunrise", encoder=None).hits if h.doc_id == "c1:t3"]


def test_a_deleted_conversation_leaves_the_index_with_it(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS))
    write(store, dialogue("c2", [("Ann", "Quarterly invoices are due on Friday.")]))
    index_sources(store, encoder=None)
    store.delete_conversation("c1")
    # Gone at once (foreign key cascade; the SQLite full-text index follows by trigger) …
    assert _count(store, t.search_documents) == 1
    assert search(store, "painted sunrise lake", encoder=None).hits == ()
    if "sqlite" in store.description or store.description.endswith(".db"):
        with store._read() as connection:
            assert connection.execute(text("SELECT count(*) FROM search_fts_docsize")).scalar() == 1
    # … and the next pass has nothing to remove.
    assert index_sources(store, encoder=None).removed == 0


def test_a_message_that_disappeared_from_its_conversation_is_removed(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS))
    index_sources(store, encoder=None)
    with store._write() as connection:
        connection.execute(t.messages.delete().where(t.messages.c.source_id == "c1:t7"))
        connection.execute(t.sources.delete().where(t.sources.c.source_id == "c1:t7"))
    report = index_sources(store, encoder=None)
    assert report.removed == 1
    assert report.updated == 1  # t6 lost its next turn


@needs_embeddings
def test_unchanged_documents_are_not_embedded_again(sqlite_store: SqlStore) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    first = index_sources(sqlite_store)
    assert first.embedded == len(FRIENDS)
    assert _count(sqlite_store, t.search_vectors) == len(FRIENDS)
    assert index_sources(sqlite_store).embedded == 0
    revised = list(FRIENDS)
    revised[3] = ("Melanie", "I sculpted a clay bowl last weekend, want to see it?")
    write(sqlite_store, dialogue("c1", revised))
    report = index_sources(sqlite_store)
    # Three documents rebuilt (the neighbours' full text quotes the turn), one re-embedded.
    assert (report.updated, report.embedded) == (3, 1)
    assert _count(sqlite_store, t.search_vectors) == len(FRIENDS)


@needs_embeddings
def test_documents_indexed_without_embeddings_get_vectors_once_the_model_is_there(
    sqlite_store: SqlStore,
) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_sources(sqlite_store, encoder=None)
    assert _count(sqlite_store, t.search_vectors) == 0
    report = index_sources(sqlite_store)
    assert (report.added, report.updated, report.embedded) == (0, 0, len(FRIENDS))
    assert _count(sqlite_store, t.search_vectors) == len(FRIENDS)


ENTITY = SearchDocument(
    doc_type="entity",
    doc_id="e-1",
    project_id=None,
    title="Lake sunrise painting",
    text="A painting Melanie made of a sunrise over a lake.",
    occurred_at=datetime(2023, 5, 8, tzinfo=UTC),
    source_refs=(SourceRef("message", "c1:t3", "c1"),),
)


def test_graph_objects_are_indexed_with_their_source_references(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS))
    index_sources(store, encoder=None)
    assert index_graph_objects(store, [ENTITY], encoder=None) == 1
    hits = search(store, "sunrise painting", doc_types=["entity"], encoder=None).hits
    assert [h.doc_id for h in hits] == ["e-1"]
    assert hits[0].source_refs == (SourceRef("message", "c1:t3", "c1"),)
    # Replacing keeps one document; removing takes it out.
    index_graph_objects(
        store, [dataclasses.replace(ENTITY, text="Now a watercolour.")], encoder=None
    )
    assert [h.doc_id for h in search(store, "watercolour", encoder=None).hits] == ["e-1"]
    remove_graph_objects(store, "entity", ["e-1"])
    assert search(store, "watercolour", encoder=None).hits == ()
    # Source documents are untouched by either.
    assert index_sources(store, encoder=None).added == 0


def test_graph_objects_written_in_a_transaction_that_rolls_back_are_not_indexed(
    store: SqlStore,
) -> None:
    def publish() -> None:
        with store._write() as connection:
            index_graph_objects(connection, [ENTITY], encoder=None)
            raise RuntimeError("publish failed")

    with pytest.raises(RuntimeError):
        publish()
    assert _count(store, t.search_documents) == 0


def test_messages_cannot_be_indexed_as_graph_objects(store: SqlStore) -> None:
    with pytest.raises(ValueError, match="index_sources"):
        index_graph_objects(store, [dataclasses.replace(ENTITY, doc_type="message")], encoder=None)


@needs_embeddings
def test_graph_objects_get_vectors_after_publish_once_the_embedder_reaches_them(
    sqlite_store: SqlStore,
) -> None:
    encoder = load_encoder()
    assert encoder is not None
    index_graph_objects(sqlite_store, [ENTITY])
    assert _count(sqlite_store, t.search_vectors) == 0, "publish writes full text only"
    assert [h.doc_id for h in search(sqlite_store, "sunrise painting").hits] == ["e-1"]
    report = embed_pending(sqlite_store, encoder)
    assert (report.embedded, report.remaining) == (1, 0)
    result = search(sqlite_store, "artwork of the morning sky", doc_types=["entity"])
    assert result.mode == "hybrid"
    assert result.hits[0].doc_id == "e-1"
    assert result.hits[0].similarity is not None and result.hits[0].similarity > 0.3


@needs_embeddings
def test_graph_objects_given_an_encoder_are_embedded_before_the_write(
    sqlite_store: SqlStore,
) -> None:
    index_graph_objects(sqlite_store, [ENTITY], encoder="auto")
    assert _count(sqlite_store, t.search_vectors) == 1


def test_a_result_published_without_its_documents_is_indexed_by_the_next_pass(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results published before publish and index were one transaction may lack their
    documents; the next full-text pass adds them, with their sources, and then rests."""
    import proctor.search
    from proctor.ingest import ingest
    from proctor.review import ReviewRequest, start_review
    from tests.conftest import EXAMPLES_DIR

    ingest(store, [EXAMPLES_DIR])
    # The pipeline imports it when it publishes (review/_pipeline.py's _index_graph).
    monkeypatch.setattr(proctor.search, "index_graph_objects", lambda *args, **kwargs: 0)
    assert start_review(store, ReviewRequest(), semantic=None).status == "completed"
    monkeypatch.undo()
    graph = {
        "entity": _count(store, t.entities),
        "event": _count(store, t.graph_events),
        "story_line": _count(store, t.story_lines),
    }
    assert all(graph.values())

    def documents(doc_type: str) -> int:
        with store._read() as connection:
            return int(
                connection.execute(
                    select(func.count()).where(t.search_documents.c.doc_type == doc_type)
                ).scalar_one()
            )

    assert [documents(doc_type) for doc_type in graph] == [0, 0, 0]
    index_sources(store, encoder=None)
    assert {doc_type: documents(doc_type) for doc_type in graph} == graph
    events = search(store, "pytest", doc_types=["event"], encoder=None).hits
    assert events and all(hit.source_refs for hit in events)
    with store._read() as connection:
        before = connection.execute(select(func.max(t.search_documents.c.row_id))).scalar()
    index_sources(store, encoder=None)
    with store._read() as connection:
        after = connection.execute(select(func.max(t.search_documents.c.row_id))).scalar()
    assert after == before, "nothing published since: nothing rewritten"


def _planned_scopes(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """Record which conversations each pass plans (None: all of them)."""
    from proctor.search import _index

    scopes: list[list[str] | None] = []
    plan = _index._plan

    def spy(connection: object, scope: list[str] | None = None) -> object:
        scopes.append(None if scope is None else list(scope))
        return plan(connection, scope)  # type: ignore[arg-type]

    monkeypatch.setattr(_index, "_plan", spy)
    return scopes


def test_a_pass_after_new_messages_plans_only_the_conversations_that_changed(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proctor.search import _index

    monkeypatch.setattr(_index, "LATE_COMMIT", timedelta(0))
    for n in range(5):
        write(store, dialogue(f"old-{n}", FRIENDS))
    index_sources(store, encoder=None)
    scopes = _planned_scopes(monkeypatch)
    longer = [*FRIENDS, ("Melanie", "We saw a zebrafinch on the camping trip!")]
    write(store, dialogue("old-2", longer))
    write(store, dialogue("new", [("Ann", "Quarterly invoices are due on Friday.")]))
    report = index_sources(store, encoder=None)
    (scope,) = scopes
    assert scope is not None and {"old-2", "new"} <= set(scope) and "old-0" not in scope
    assert (report.added, report.updated, report.removed) == (2, 1, 0)
    assert report.documents == 5 * len(FRIENDS) + 2
    assert search(store, "zebrafinch", encoder=None).hits[0].doc_id == f"old-2:t{len(FRIENDS)}"


def test_a_write_that_committed_after_a_pass_but_was_stamped_before_it_is_still_indexed(
    store: SqlStore,
) -> None:
    write(store, dialogue("c1", FRIENDS))
    write(store, dialogue("c2", [("Ann", "Quarterly invoices are due on Friday.")]))
    index_sources(store, encoder=None)
    with store._read() as connection:
        latest = connection.execute(select(func.max(t.sources.c.updated_at))).scalar_one()
    # Another process revised c1:t3 in a transaction stamped 30 s before the pass's latest
    # update and committed only now.
    with store._write() as connection:
        connection.execute(
            t.messages.update()
            .where(t.messages.c.source_id == "c1:t3")
            .values(text="I sculpted a clay bowl last weekend.")
        )
        connection.execute(
            t.sources.update()
            .where(t.sources.c.source_id == "c1:t3")
            .values(content_hash="late-commit", updated_at=latest - timedelta(seconds=30))
        )
        connection.execute(
            t.sources.update()
            .where(t.sources.c.source_id == "c2:t0")
            .values(updated_at=latest + timedelta(seconds=1))
        )
    index_sources(store, encoder=None)
    assert search(store, "clay bowl", encoder=None).hits[0].doc_id == "c1:t3"


def test_sources_removed_without_a_trace_are_found_by_the_totals_check(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proctor.search import _index

    monkeypatch.setattr(_index, "LATE_COMMIT", timedelta(0))
    write(store, dialogue("c1", FRIENDS))
    write(store, dialogue("c2", [("Ann", "Quarterly invoices are due on Friday.")]))
    index_sources(store, encoder=None)
    scopes = _planned_scopes(monkeypatch)
    with store._write() as connection:
        connection.execute(t.messages.delete().where(t.messages.c.source_id == "c1:t7"))
        connection.execute(t.sources.delete().where(t.sources.c.source_id == "c1:t7"))
    report = index_sources(store, encoder=None)
    assert scopes[-1] is None, "the totals disagreed: a full pass followed"
    assert report.removed == 1
    assert _count(store, t.search_documents) == len(FRIENDS)
