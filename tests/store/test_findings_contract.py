"""Findings in the store on every backend (SPEC SUP-8, ING-8b)."""

from __future__ import annotations

import pytest

from proctor.errors import ConfigError
from proctor.findings import Evidence, Finding, finding_key
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from tests.builders import conversation_bundle


def _finding(
    title: str = "Tool call budget exceeded: 12 of 10 calls",
    severity: str = "high",
    action: str = "pause",
    source: str = "test:conv-1:call-1",
) -> Finding:
    evidence = [Evidence(source_type="tool_call", source_id=source)]
    return Finding(
        key=finding_key("budget", "test:conv-1", evidence, title),
        conversation_id="test:conv-1",
        rule="budget",
        rule_version=1,
        action=action,  # type: ignore[arg-type]
        category="budget",
        severity=severity,  # type: ignore[arg-type]
        title=title,
        evidence=evidence,
        actual=12,
        threshold=10,
    )


@pytest.fixture
def stored(store: SqlStore) -> SqlStore:
    store.write_conversation(prepare_bundle(conversation_bundle()))
    return store


def test_recording_the_same_finding_twice_keeps_one_row_and_one_notification(
    stored: SqlStore,
) -> None:
    first = stored.record_findings([_finding()])
    again = stored.record_findings([_finding()])
    assert len(first.new) == 1
    assert first.notified == first.new
    assert (again.new, again.updated, again.unchanged, again.notified) == ((), (), 1, ())
    rows, total = stored.findings()
    assert total == 1
    assert rows[0].evidence[0].source_id == "test:conv-1:call-1"
    assert len(stored.notifications()) == 1


def test_a_new_measurement_updates_the_finding_but_keeps_the_users_status(stored: SqlStore) -> None:
    stored.record_findings([_finding()])
    finding_id = stored.findings()[0][0].finding_id
    assert finding_id is not None
    stored.set_finding_status(finding_id, "acknowledged")
    stored.set_finding_digested(finding_id, True)
    outcome = stored.record_findings([_finding(title="Tool call budget exceeded: 14 of 10 calls")])
    assert len(outcome.updated) == 1
    finding = stored.finding(finding_id)
    assert finding.title.startswith("Tool call budget exceeded: 14")
    assert (finding.status, finding.digested) == ("acknowledged", True)


def test_status_changes_follow_the_lifecycle(stored: SqlStore) -> None:
    stored.record_findings([_finding()])
    finding_id = stored.findings()[0][0].finding_id
    assert finding_id is not None
    stored.set_finding_status(finding_id, "false_positive")
    with pytest.raises(ConfigError, match="cannot become 'resolved'"):
        stored.set_finding_status(finding_id, "resolved")
    stored.set_finding_status(finding_id, "open")
    assert stored.finding(finding_id).status == "open"


def test_only_notifying_findings_notify(stored: SqlStore) -> None:
    quiet = _finding(
        title="Repeated call", severity="medium", action="warn", source="test:conv-1:m1"
    )
    outcome = stored.record_findings([quiet])
    assert outcome.notified == ()
    assert stored.notifications() == []


def test_findings_page_most_severe_first_and_filter(stored: SqlStore) -> None:
    stored.record_findings(
        [
            _finding(title="low thing", severity="low", action="comment", source="test:conv-1:m0"),
            _finding(),
            _finding(
                title="medium thing", severity="medium", action="warn", source="test:conv-1:m1"
            ),
        ]
    )
    rows, total = stored.findings()
    assert total == 3
    assert [f.severity for f in rows] == ["high", "medium", "low"]
    rows, total = stored.findings(min_severity="medium")
    assert total == 2
    rows, total = stored.findings(statuses=["dismissed"])
    assert total == 0


def test_deleting_a_conversation_deletes_its_findings(stored: SqlStore) -> None:
    stored.record_findings([_finding()])
    stored.delete_conversation("test:conv-1")
    assert stored.findings()[1] == 0
    assert stored.notifications() == []


def test_findings_resolve_by_prefix(stored: SqlStore) -> None:
    stored.record_findings([_finding()])
    finding = stored.findings()[0][0]
    assert finding.finding_id is not None
    assert stored.resolve_finding_id(finding.finding_id[:8]) == finding.finding_id
    assert stored.resolve_finding_id(finding.key[:10]) == finding.finding_id
