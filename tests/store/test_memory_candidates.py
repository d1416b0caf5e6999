"""Memories drafted from findings on every backend (SPEC SUP-10): candidate → confirmed."""

from __future__ import annotations

import pytest

from proctor.errors import ConfigError, NotFoundError
from proctor.findings import Evidence, Finding, finding_key
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store._memory_store import MEMORY_TEXT_CHARS, draft_text
from tests.builders import conversation_bundle


def _finding(conversation_id: str, title: str, content: str = "") -> Finding:
    evidence = [Evidence(source_type="tool_call", source_id=f"{conversation_id}:call-1")]
    return Finding(
        key=finding_key("budget", conversation_id, evidence, title),
        conversation_id=conversation_id,
        rule="budget",
        rule_version=1,
        action="warn",
        category="budget",
        severity="medium",
        title=title,
        content=content,
        evidence=evidence,
    )


@pytest.fixture
def found(store: SqlStore) -> tuple[SqlStore, str, str]:
    """Two conversations in two projects, one finding each: (store, invoice's, billing's)."""
    store.write_conversation(prepare_bundle(conversation_bundle("test:conv-1")))
    store.write_conversation(
        prepare_bundle(conversation_bundle("test:conv-2", project_hint="billing"))
    )
    store.record_findings(
        [
            _finding("test:conv-1", "Tests were skipped", "pytest ran with -k and left 40 out."),
            _finding("test:conv-2", "Force push to main"),
        ]
    )
    ids = {f.conversation_id: f.finding_id for f in store.findings()[0]}
    first, second = ids["test:conv-1"], ids["test:conv-2"]
    assert first is not None and second is not None
    return store, first, second


def test_remembering_a_finding_drafts_a_candidate_of_its_conversations_project(
    found: tuple[SqlStore, str, str],
) -> None:
    store, finding_id, _ = found

    candidate = store.remember_finding(finding_id)

    assert candidate.status == "candidate" and candidate.memory_id is None
    assert candidate.text == "Tests were skipped: pytest ran with -k and left 40 out."
    assert candidate.project_id is not None
    assert store.memory_candidates(project="invoice-service") == [candidate]
    assert store.memory_candidates() == [candidate]
    assert store.project_memories(candidate.project_id) == []


def test_asking_again_returns_the_pending_candidate_instead_of_a_second(
    found: tuple[SqlStore, str, str],
) -> None:
    store, finding_id, _ = found
    first = store.remember_finding(finding_id)

    again = store.remember_finding(finding_id, "Another text")

    assert again == first
    assert len(store.memory_candidates()) == 1


def test_confirming_writes_the_memory_with_the_edited_text_and_only_for_that_project(
    found: tuple[SqlStore, str, str],
) -> None:
    store, finding_id, other_id = found
    candidate = store.remember_finding(finding_id)
    store.remember_finding(other_id)

    confirmed = store.confirm_memory(candidate.candidate_id, "  Never skip tests with -k.  ")

    assert confirmed.status == "confirmed" and confirmed.decided_at is not None
    assert confirmed.text == "Never skip tests with -k."
    [memory] = store.project_memories(candidate.project_id)
    assert (memory.memory_id, memory.text) == (confirmed.memory_id, "Never skip tests with -k.")
    assert store.conversation_memories("test:conv-1") == [memory]
    assert store.conversation_memories("test:conv-2") == []
    assert store.project_memories(None) == []
    assert store.confirm_memory(candidate.candidate_id) == confirmed
    assert len(store.project_memories(candidate.project_id)) == 1


def test_a_discarded_candidate_writes_no_memory_and_cannot_be_confirmed_later(
    found: tuple[SqlStore, str, str],
) -> None:
    store, finding_id, _ = found
    candidate = store.remember_finding(finding_id)

    discarded = store.discard_memory(candidate.candidate_id)

    assert discarded.status == "discarded" and discarded.memory_id is None
    assert store.memory_candidates() == []
    assert store.memory_candidates(status="discarded") == [discarded]
    assert store.project_memories(candidate.project_id) == []
    with pytest.raises(ConfigError, match="discarded"):
        store.confirm_memory(candidate.candidate_id)
    assert store.remember_finding(finding_id).candidate_id != candidate.candidate_id


def test_a_confirmed_candidate_cannot_be_discarded(found: tuple[SqlStore, str, str]) -> None:
    store, finding_id, _ = found
    candidate = store.remember_finding(finding_id)
    store.confirm_memory(candidate.candidate_id)

    with pytest.raises(ConfigError, match="already confirmed"):
        store.discard_memory(candidate.candidate_id)
    assert len(store.project_memories(candidate.project_id)) == 1


def test_candidates_are_listed_by_project_id_or_name(found: tuple[SqlStore, str, str]) -> None:
    store, finding_id, other_id = found
    mine = store.remember_finding(finding_id)
    theirs = store.remember_finding(other_id)

    assert store.memory_candidates(project="billing") == [theirs]
    assert store.memory_candidates(project=mine.project_id) == [mine]
    assert store.memory_candidates(project="nowhere") == []


@pytest.mark.parametrize("text", ["", "   \n", "x" * (MEMORY_TEXT_CHARS + 1)])
def test_an_empty_or_overlong_text_is_refused_and_nothing_is_written(
    found: tuple[SqlStore, str, str], text: str
) -> None:
    store, finding_id, _ = found
    with pytest.raises(ConfigError, match="memory's text"):
        store.remember_finding(finding_id, text)
    assert store.memory_candidates() == []
    candidate = store.remember_finding(finding_id)
    with pytest.raises(ConfigError, match="memory's text"):
        store.confirm_memory(candidate.candidate_id, text)
    assert store.memory_candidate(candidate.candidate_id).status == "candidate"
    assert store.project_memories(candidate.project_id) == []


def test_unknown_ids_are_named_in_the_error(store: SqlStore) -> None:
    with pytest.raises(NotFoundError, match="no finding 'nope'"):
        store.remember_finding("nope")
    with pytest.raises(NotFoundError, match="no memory candidate 'gone'"):
        store.confirm_memory("gone")


def test_a_candidate_goes_with_its_conversation_and_a_confirmed_memory_stays(
    found: tuple[SqlStore, str, str],
) -> None:
    store, finding_id, _ = found
    confirmed = store.confirm_memory(store.remember_finding(finding_id).candidate_id)

    store.delete_conversation("test:conv-1")

    with pytest.raises(NotFoundError):
        store.memory_candidate(confirmed.candidate_id)
    assert [m.memory_id for m in store.project_memories(confirmed.project_id)] == [
        confirmed.memory_id
    ]


@pytest.mark.parametrize(
    ("title", "content", "expected"),
    [
        ("Force push", "", "Force push"),
        ("Force push", "Force push", "Force push"),
        ("  Force\npush ", " to   main ", "Force push: to main"),
    ],
)
def test_the_draft_is_the_findings_title_and_what_it_says_on_one_line(
    title: str, content: str, expected: str
) -> None:
    assert draft_text(title, content) == expected


def test_a_long_finding_is_drafted_within_bounds() -> None:
    drafted = draft_text("Loop", "word " * 1000)
    assert len(drafted) < 700 and drafted.endswith("…")
