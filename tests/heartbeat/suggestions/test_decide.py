"""Accepting and ignoring suggestions (SPEC HB-6).

An accepted open item becomes a paused task; an accepted convention confirms its entity
and records a memory; an ignored suggestion comes back only with new evidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.errors import SuggestionStateError
from proctor.heartbeat.suggestions import (
    accept_suggestion,
    ignore_suggestion,
    make_suggestions,
)
from proctor.sources import prepare_bundle
from proctor.store import SqlStore, open_store
from tests.builders import conversation_bundle
from tests.heartbeat.suggestions.builders import CID, citing, publish, reviewed
from tests.store.graph_drafts import message, sample_draft


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "proctor.db")
    try:
        yield opened
    finally:
        opened.close()


def _make(store: SqlStore, result_id: str) -> None:
    make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)


def test_accepting_an_open_item_creates_a_paused_task(store: SqlStore) -> None:
    _make(store, reviewed(store))
    item = next(s for s in store.suggestions() if s.title == "pytest still failing")
    decision = accept_suggestion(store, item.suggestion_id[:8])
    assert decision.changed
    assert decision.suggestion.status == "accepted"
    assert decision.suggestion.decided_at is not None
    (task,) = store.user_tasks()
    assert (task.status, task.title, task.suggestion_id) == (
        "paused",
        "pytest still failing",
        item.suggestion_id,
    )
    assert task.detail == item.text
    again = accept_suggestion(store, item.suggestion_id)
    assert not again.changed
    assert len(store.user_tasks()) == 1, "accepting twice creates one task"


def test_accepting_a_convention_confirms_the_entity_and_records_a_memory(
    store: SqlStore,
) -> None:
    result_id = publish(store, citing(tuple(message(CID, i) for i in range(3))))
    _make(store, result_id)
    (convention,) = store.suggestions()
    assert convention.kind == "convention" and convention.object_id is not None
    decision = accept_suggestion(store, convention.suggestion_id)
    assert decision.confirmed_entity_id == convention.object_id
    detail = store.entity(convention.object_id)
    assert detail.entity.state == "confirmed"
    assert [e.action for e in detail.edits] == ["confirm"]
    (memory,) = store.memories()
    assert (memory.entity_id, memory.text) == (convention.object_id, convention.text)
    assert store.user_tasks() == []


def test_accepting_a_revision_only_marks_it_accepted(store: SqlStore) -> None:
    _make(store, publish(store, sample_draft))
    revision = next(s for s in store.suggestions() if s.kind == "revision")
    accept_suggestion(store, revision.suggestion_id)
    assert store.suggestion(revision.suggestion_id).status == "accepted"
    assert (store.user_tasks(), store.memories()) == ([], [])


def test_a_decided_suggestion_refuses_the_other_decision(store: SqlStore) -> None:
    _make(store, publish(store, sample_draft))
    first, second = store.suggestions()
    ignore_suggestion(store, first.suggestion_id)
    assert not ignore_suggestion(store, first.suggestion_id).changed
    with pytest.raises(SuggestionStateError, match="already ignored"):
        accept_suggestion(store, first.suggestion_id)
    accept_suggestion(store, second.suggestion_id)
    with pytest.raises(SuggestionStateError, match="already accepted"):
        ignore_suggestion(store, second.suggestion_id)


def test_an_ignored_suggestion_returns_only_with_new_evidence(store: SqlStore) -> None:
    result_id = publish(store, sample_draft)
    _make(store, result_id)
    revision = next(s for s in store.suggestions() if s.kind == "revision")
    ignore_suggestion(store, revision.suggestion_id)

    _make(store, result_id)
    assert store.suggestion(revision.suggestion_id).status == "ignored", "same evidence"

    store.write_conversation(prepare_bundle(conversation_bundle(CID, text_prefix="edited")))
    outcome = make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)
    back = store.suggestion(revision.suggestion_id)
    assert back.status == "open"
    assert back.decided_at is None
    assert back.evidence_key != revision.evidence_key
    assert outcome.reopened >= 1


def test_an_accepted_suggestion_stays_accepted_when_made_again(store: SqlStore) -> None:
    result_id = publish(store, sample_draft)
    _make(store, result_id)
    item = next(s for s in store.suggestions() if s.kind == "open_item")
    accept_suggestion(store, item.suggestion_id)
    store.write_conversation(prepare_bundle(conversation_bundle(CID, text_prefix="edited")))
    outcome = make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)
    assert store.suggestion(item.suggestion_id).status == "accepted"
    assert outcome.created == 0
