"""Ranking: the turn that says it comes first, neighbours and authors count, filters apply."""

from __future__ import annotations

import sys

import pytest

from proctor.errors import NotFoundError
from proctor.search import SourceRef, index_sources, query_terms, search
from proctor.store import SqlStore
from proctor.transcript import ToolCall
from tests.search.conftest import needs_embeddings
from tests.search.helpers import FRIENDS, dialogue, write


@pytest.fixture
def friends(store: SqlStore) -> SqlStore:
    write(store, dialogue("c1", FRIENDS))
    write(
        store,
        dialogue(
            "c2",
            [
                ("Dev", "The invoice rounding test fails on half cents."),
                ("Agent", "I changed the rounding mode to half up and the tests pass."),
            ],
            project="billing",
            title="Fix rounding",
            calls=[
                ToolCall(
                    source_id="c2:call",
                    name="Bash",
                    arguments={"command": "pytest -q tests/test_rounding.py"},
                    result_text="1 failed: test_half_cent_rounding",
                )
            ],
        ),
    )
    index_sources(store, encoder=None)
    return store


def test_query_words_drop_stop_words_and_repeats() -> None:
    assert query_terms("When did Caroline go to the support group, Caroline?") == [
        "caroline",
        "go",
        "support",
        "group",
    ]


def test_the_turn_that_says_it_ranks_first_with_its_source(friends: SqlStore) -> None:
    result = search(friends, "support group", encoder=None)
    assert result.mode == "full_text"
    top = result.hits[0]
    assert top.doc_id == "c1:t0"
    assert top.source_refs == (SourceRef("message", "c1:t0", "c1"),)
    assert top.author == "Caroline"
    assert top.project == "memories"
    assert top.occurred_at is not None
    assert top.full_text == pytest.approx(1.0)
    assert "support group" in top.excerpt


def test_stemming_finds_other_forms_of_a_word(friends: SqlStore) -> None:
    # "painted" and "Painting" (the turn that asks to be shown the painting yields first).
    hits = search(friends, "paint", encoder=None).hits
    assert {h.doc_id for h in hits[:2]} == {"c1:t3", "c1:t4"}


def test_a_reply_is_found_through_the_turn_it_answers(friends: SqlStore) -> None:
    # "What happened there?" shares no word with the query; the turn before it does.
    ids = [h.doc_id for h in search(friends, "support group", encoder=None, limit=3).hits]
    assert "c1:t1" in ids


def test_a_query_naming_a_person_prefers_what_that_person_wrote(friends: SqlStore) -> None:
    # Both turns speak of painting; the question is about Melanie's.
    hits = search(friends, "What did Melanie paint?", encoder=None).hits
    assert hits[0].author == "Melanie"


def test_filters_by_project_conversation_and_type(friends: SqlStore) -> None:
    assert {h.conversation_id for h in search(friends, "rounding", encoder=None).hits} == {"c2"}
    assert search(friends, "rounding", project="memories", encoder=None).hits == ()
    assert search(friends, "rounding", conversation_id="c1", encoder=None).hits == ()
    calls = search(friends, "rounding", doc_types=["tool_call"], encoder=None).hits
    assert [(h.doc_type, h.title) for h in calls] == [("tool_call", "Bash")]
    with pytest.raises(NotFoundError, match="no project called 'nope'"):
        search(friends, "rounding", project="nope", encoder=None)


def test_a_query_of_stop_words_finds_nothing_in_full_text(friends: SqlStore) -> None:
    assert search(friends, "what is the", encoder=None).hits == ()


def test_the_limit_caps_the_hits(friends: SqlStore) -> None:
    assert len(search(friends, "camping painting adoption family", limit=2, encoder=None).hits) == 2


def test_without_the_extra_search_falls_back_to_full_text_and_says_why(
    friends: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    report = index_sources(friends)
    assert report.embeddings is not None
    assert "proctor[embeddings]" in report.embeddings
    result = search(friends, "support group")
    assert result.mode == "full_text"
    assert result.note is not None
    assert "tokenizers is not installed" in result.note
    assert result.hits[0].doc_id == "c1:t0"
    assert result.hits[0].similarity is None


@needs_embeddings
def test_hybrid_search_finds_a_turn_by_meaning_when_no_word_matches(
    sqlite_store: SqlStore,
) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_sources(sqlite_store)
    # No turn contains "artwork" or "morning"; the painted sunrise means it.
    assert search(sqlite_store, "artwork morning", encoder=None).hits == ()
    result = search(sqlite_store, "artwork of the morning sky", limit=3)
    assert result.mode == "hybrid"
    assert result.note is None
    assert "c1:t3" in [h.doc_id for h in result.hits]
    assert all(h.similarity is not None for h in result.hits)


@needs_embeddings
def test_hybrid_search_keeps_the_exact_match_first(sqlite_store: SqlStore) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_sources(sqlite_store)
    assert search(sqlite_store, "saving up to adopt a child").hits[0].doc_id == "c1:t6"
    assert search(sqlite_store, "camping in the mountains").hits[0].doc_id == "c1:t5"


@needs_embeddings
def test_hybrid_search_sees_documents_added_after_the_first_query(
    sqlite_store: SqlStore,
) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_sources(sqlite_store)
    search(sqlite_store, "camping")
    write(sqlite_store, dialogue("c3", [("Zoe", "We bought a sailing boat for the summer.")]))
    index_sources(sqlite_store)
    assert search(sqlite_store, "sailing boat").hits[0].doc_id == "c3:t0"
    sqlite_store.delete_conversation("c3")
    assert "c3:t0" not in [h.doc_id for h in search(sqlite_store, "sailing boat").hits]
    assert search(sqlite_store, "sailing", conversation_id="c3").hits == ()


def test_a_rare_query_word_outweighs_a_common_one(store: SqlStore) -> None:
    # Eight turns say "weekend", twice; one says "pottery", once. BM25 on SQLite and
    # IDF-weighted ts_rank on PostgreSQL put the pottery turn first; plain ts_rank did not.
    turns = [("Mel", f"The weekend was busy, weekend plans number {i} again.") for i in range(8)]
    turns.insert(4, ("Caroline", "I took a pottery class."))
    write(store, dialogue("c3", turns))
    index_sources(store, encoder=None)
    hits = search(store, "weekend pottery", encoder=None).hits
    assert hits[0].doc_id == "c3:t4"
