"""Suggestion candidates come only from one result's changes (SPEC HB-5)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.heartbeat.suggestions import MAX_CANDIDATES, candidates, fingerprint
from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore, open_store
from tests.heartbeat.suggestions.builders import (
    CID,
    citing,
    disagreeing,
    many_open_items,
    publish,
    quiet,
    reviewed,
)
from tests.store.graph_drafts import message, sample_draft, tool_call


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "proctor.db")
    try:
        yield opened
    finally:
        opened.close()


def test_a_reviewed_example_suggests_its_open_items_and_well_supported_entities(
    store: SqlStore,
) -> None:
    result_id = reviewed(store)
    found = candidates(store.result_changes(result_id))
    titles = {c.title for c in found if c.kind == "open_item"}
    assert "pytest still failing" in titles
    pytest_item = next(c for c in found if c.title == "pytest still failing")
    assert pytest_item.rule_text.startswith("Open: pytest still failing — Last run at")
    assert pytest_item.rule_text.endswith("; consider a task to fix it.")
    assert all(e.content_hash for e in pytest_item.evidence)
    conventions = [c for c in found if c.kind == "convention"]
    assert conventions, "the examples cite some commands and files from 3+ sources"
    assert all(len(c.evidence) >= 3 for c in conventions)
    kinds = [c.kind for c in found]
    assert kinds == sorted(kinds, key=["open_item", "convention"].index), "open items first"


def test_fingerprints_and_evidence_keys_are_stable_across_runs(store: SqlStore) -> None:
    first = candidates(store.result_changes(reviewed(store)))
    again = start_review(store, ReviewRequest(reanalyze=True), semantic=None)
    assert again.result_id is not None
    second = candidates(store.result_changes(again.result_id))
    assert [(c.fingerprint, c.evidence_key, c.rule_text) for c in second] == [
        (c.fingerprint, c.evidence_key, c.rule_text) for c in first
    ]


def test_a_contrasts_relation_is_a_disagreement_until_a_supersedes_joins_its_entities(
    store: SqlStore,
) -> None:
    first = publish(store, disagreeing)
    (disagreement,) = [
        c for c in candidates(store.result_changes(first)) if c.kind == "disagreement"
    ]
    assert disagreement.title == "Disagreement: Half-up rounding contrasts src/app.py"
    assert "app.py still rounds half to even" in disagreement.rule_text
    assert disagreement.object_type == "relation"

    second = publish(store, lambda run, project: disagreeing(run, project, supersede=True))
    assert not [c for c in candidates(store.result_changes(second)) if c.kind == "disagreement"]


def test_a_revised_entity_change_of_the_result_is_a_revision(store: SqlStore) -> None:
    result_id = publish(store, sample_draft)
    (revision,) = [c for c in candidates(store.result_changes(result_id)) if c.kind == "revision"]
    assert revision.title == "Revised: src/app.py"
    assert "Rounding changed to half up" in revision.rule_text
    assert revision.object_type == "entity_change"


def test_a_result_with_nothing_to_act_on_has_no_candidates(store: SqlStore) -> None:
    assert candidates(store.result_changes(publish(store, quiet))) == []


def test_an_entity_needs_three_distinct_original_sources_not_three_citations(
    store: SqlStore,
) -> None:
    two = (message(CID, 0), message(CID, 1))
    publish(store, citing(two))
    again = publish(store, citing(two))
    assert [c.kind for c in candidates(store.result_changes(again))] == [], (
        "a later result citing the same two sources again is still two sources"
    )
    third = publish(store, citing((message(CID, 2),)))
    (convention,) = candidates(store.result_changes(third))
    assert convention.kind == "convention"
    assert [e.source_id for e in convention.evidence] == [f"{CID}:m{i}" for i in range(3)]
    assert "recurs in 3 sources" in convention.rule_text


def test_candidates_come_only_from_the_result_they_are_made_from(store: SqlStore) -> None:
    first = publish(store, sample_draft)
    later = publish(store, quiet)
    assert candidates(store.result_changes(first))
    assert candidates(store.result_changes(later)) == [], "the first result's items stay there"


def test_at_most_twenty_candidates_are_made_per_result(store: SqlStore) -> None:
    result_id = publish(store, many_open_items(MAX_CANDIDATES + 5))
    changes = store.result_changes(result_id)
    assert len(changes.open_items) == MAX_CANDIDATES + 5
    found = candidates(changes)
    assert len(found) == MAX_CANDIDATES
    assert len({c.fingerprint for c in found}) == MAX_CANDIDATES


def test_a_resolved_open_item_is_no_candidate(store: SqlStore) -> None:
    result_id = publish(
        store,
        lambda run, project: dataclasses.replace(
            sample_draft(run, project), changes=(), open_items=()
        ),
    )
    assert candidates(store.result_changes(result_id)) == []
    assert tool_call(CID).source_id.endswith("call-1")


def test_a_fingerprint_falls_back_to_normalised_text_without_an_object() -> None:
    assert fingerprint("open_item", None, None, "Pytest  still FAILING!") == fingerprint(
        "open_item", None, None, "pytest still failing"
    )
    assert fingerprint("open_item", "open_item", "k1") != fingerprint("revision", "open_item", "k1")
