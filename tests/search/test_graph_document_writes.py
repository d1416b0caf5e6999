"""Graph documents as a publish writes them: the stored basis, replaced rows and kept vectors."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from proctor.search import SearchDocument, SourceRef, index_graph_objects
from proctor.search._documents import digest, embedding_text
from proctor.search._graph import _basis
from proctor.search._write import Vector, add_vectors
from proctor.store import SqlStore
from proctor.store import _schema as t
from tests.properties import examples

ENTITY = SearchDocument(
    doc_type="entity",
    doc_id="e-1",
    project_id="p-1",
    title="Lake sunrise painting",
    text="A painting Melanie made of a sunrise over a lake.",
    occurred_at=datetime(2023, 5, 8, tzinfo=UTC),
    source_refs=(SourceRef("message", "c1:t3", "c1"),),
)

_ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
"""Any code point, lone surrogates included (``repr`` escapes them)."""


@settings(max_examples=examples(300))
@given(
    title=st.none() | _ANY_TEXT,
    text=_ANY_TEXT,
    occurred_at=st.none() | st.datetimes(timezones=st.just(UTC)),
    project_id=st.none() | _ANY_TEXT,
)
def test_a_graph_documents_basis_is_the_digest_of_its_title_text_time_and_project(
    title: str | None, text: str, occurred_at: datetime | None, project_id: str | None
) -> None:
    document = SearchDocument("entity", "e-1", project_id, title, text, occurred_at)
    assert _basis(document) == digest(title, text, occurred_at, project_id)


def _stored(store: SqlStore) -> list[tuple[int, str, str | None]]:
    d, v = t.search_documents, t.search_vectors
    with store._read() as connection:
        rows = connection.execute(
            select(d.c.row_id, d.c.basis, v.c.text_hash)
            .select_from(d.outerjoin(v, v.c.row_id == d.c.row_id))
            .where(d.c.doc_key == "entity:e-1")
        ).all()
    return [(int(row_id), str(basis), text_hash) for row_id, basis, text_hash in rows]


def test_a_replaced_graph_document_keeps_its_vector_only_while_its_text_is_the_same(
    store: SqlStore,
) -> None:
    index_graph_objects(store, [ENTITY], encoder=None)
    [(first_row, first_basis, no_vector)] = _stored(store)
    assert first_basis == digest(ENTITY.title, ENTITY.text, ENTITY.occurred_at, ENTITY.project_id)
    assert no_vector is None
    text_hash = digest(embedding_text(ENTITY.title, ENTITY.text))
    with store._write() as connection:
        add_vectors(connection, {first_row: Vector("test-model", text_hash, b"\0" * 8)})

    # Another date: a new row and basis, the same text for the encoder, so the same vector.
    later = SearchDocument(
        "entity", "e-1", "p-1", ENTITY.title, ENTITY.text, datetime(2024, 1, 1, tzinfo=UTC)
    )
    assert index_graph_objects(store, [ENTITY, later], encoder=None) == 1
    [(second_row, second_basis, kept)] = _stored(store)
    assert second_row > first_row
    assert second_basis == digest(later.title, later.text, later.occurred_at, later.project_id)
    assert kept == text_hash

    # Another text: its old vector no longer describes it.
    reworded = SearchDocument("entity", "e-1", "p-1", ENTITY.title, "A watercolour now.", None)
    index_graph_objects(store, [reworded], encoder=None)
    [(third_row, _, dropped)] = _stored(store)
    assert third_row > second_row
    assert dropped is None
