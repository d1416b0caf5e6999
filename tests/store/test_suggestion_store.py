"""The suggestion store on every backend: upsert by fingerprint, decisions, tasks, memories.

SPEC HB-5, HB-6. Runs on SQLite, and on PostgreSQL when ``PROCTOR_TEST_POSTGRES_URL`` is set.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from proctor.errors import NotFoundError, SuggestionStateError
from proctor.heartbeat.suggestions import make_suggestions
from proctor.store import SqlStore
from proctor.store._suggestion_records import EvidenceRef, SuggestionDraft
from tests.builders import T0
from tests.heartbeat.suggestions.builders import CID, citing, publish
from tests.store.graph_drafts import message


def _draft(
    fingerprint: str = "f" * 32, *, kind: str = "revision", key: str = "k1"
) -> SuggestionDraft:
    return SuggestionDraft(
        fingerprint=fingerprint,
        kind=kind,  # type: ignore[arg-type]
        project_id=None,
        object_type="entity_change",
        object_id="change-1",
        title="Revised: app.py",
        text=f"text for {key}",
        rule_text=f"rule for {key}",
        phrased=False,
        evidence=(EvidenceRef("message", "m1", key),),
        evidence_key=key,
    )


def test_saving_twice_updates_an_open_suggestion_in_place(store: SqlStore) -> None:
    first = store.save_suggestions([_draft()], result_id="r1", heartbeat_id="h1", now=T0)
    assert first.count("created") == 1
    later = T0 + timedelta(hours=1)
    again = store.save_suggestions([_draft(key="k2")], result_id="r2", heartbeat_id=None, now=later)
    assert again.count("refreshed") == 1
    (saved,) = store.suggestions(status=None)
    assert saved.suggestion_id == first.actions[0][0]
    assert (saved.result_id, saved.heartbeat_id, saved.text) == ("r2", None, "text for k2")
    assert saved.evidence == (EvidenceRef("message", "m1", "k2"),)
    assert (saved.created_at, saved.updated_at) == (T0, later)


def test_an_ignored_suggestion_reopens_only_when_its_evidence_key_changes(
    store: SqlStore,
) -> None:
    store.save_suggestions([_draft()], result_id="r1", heartbeat_id=None, now=T0)
    (saved,) = store.suggestions()
    store.ignore_suggestion(saved.suggestion_id, now=T0)
    same = store.save_suggestions([_draft()], result_id="r2", heartbeat_id=None, now=T0)
    assert same.count("unchanged") == 1
    assert store.suggestions() == []
    new = store.save_suggestions([_draft(key="k2")], result_id="r3", heartbeat_id=None, now=T0)
    assert new.count("reopened") == 1
    (back,) = store.suggestions()
    assert (back.status, back.decided_at, back.result_id) == ("open", None, "r3")


def test_accepted_suggestions_are_left_alone_by_later_saves(store: SqlStore) -> None:
    store.save_suggestions([_draft()], result_id="r1", heartbeat_id=None, now=T0)
    (saved,) = store.suggestions()
    decision = store.accept_suggestion(saved.suggestion_id[:6], now=T0)
    assert decision.changed and decision.task is None and decision.memory is None
    outcome = store.save_suggestions([_draft(key="k9")], result_id="r2", heartbeat_id=None)
    assert outcome.count("unchanged") == 1
    assert store.suggestion(saved.suggestion_id).status == "accepted"
    assert store.suggestion(saved.suggestion_id).text == "text for k1"


def test_accepting_an_open_item_adds_a_paused_task_in_the_same_write(store: SqlStore) -> None:
    store.save_suggestions([_draft(kind="open_item")], result_id="r1", heartbeat_id=None)
    (saved,) = store.suggestions()
    decision = store.accept_suggestion(saved.suggestion_id, now=T0)
    assert decision.task is not None
    assert store.user_tasks() == [decision.task]
    assert decision.task.status == "paused"


def test_accepting_a_convention_confirms_its_entity_and_remembers_it(store: SqlStore) -> None:
    result_id = publish(store, citing(tuple(message(CID, i) for i in range(3))))
    make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)
    (convention,) = store.suggestions()
    decision = store.accept_suggestion(convention.suggestion_id, now=T0)
    assert decision.memory is not None
    assert store.memories(entity_id=convention.object_id) == [decision.memory]
    assert convention.object_id is not None
    assert store.entity(convention.object_id).entity.state == "confirmed"


def test_deciding_the_other_way_is_refused_and_unknown_ids_are_not_found(
    store: SqlStore,
) -> None:
    store.save_suggestions([_draft()], result_id="r1", heartbeat_id=None)
    (saved,) = store.suggestions()
    store.accept_suggestion(saved.suggestion_id)
    with pytest.raises(SuggestionStateError):
        store.ignore_suggestion(saved.suggestion_id)
    with pytest.raises(NotFoundError):
        store.suggestion("nope")


def test_listing_filters_by_status_and_project_before_the_limit(store: SqlStore) -> None:
    drafts = [_draft(f"{n:032d}") for n in range(3)]
    store.save_suggestions(drafts, result_id="r1", heartbeat_id=None)
    first = store.suggestions()[0]
    store.ignore_suggestion(first.suggestion_id)
    assert len(store.suggestions()) == 2
    assert len(store.suggestions(status=None)) == 3
    assert len(store.suggestions(status="ignored")) == 1
    assert len(store.suggestions(status=None, limit=1)) == 1
    assert store.suggestions(project="no-such-project") == []
