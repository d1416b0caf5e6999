"""Notifications as people read them and as the webhook outbox claims them, on every backend
(SPEC SUP-8)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from proctor._util.clock import utcnow
from proctor.errors import NotFoundError
from proctor.findings import Evidence, Finding, finding_key
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from tests.builders import conversation_bundle


def _finding(
    conversation_id: str,
    title: str,
    *,
    severity: str = "high",
    action: str = "warn",
) -> Finding:
    evidence = [Evidence(source_type="tool_call", source_id=f"{conversation_id}:{title}")]
    return Finding(
        key=finding_key("destructive_command", conversation_id, evidence, title),
        conversation_id=conversation_id,
        rule="destructive_command",
        rule_version=1,
        action=action,  # type: ignore[arg-type]
        category="risk",
        severity=severity,  # type: ignore[arg-type]
        title=title,
        evidence=evidence,
    )


@pytest.fixture
def stored(store: SqlStore) -> SqlStore:
    """Two conversations in two projects."""
    store.write_conversation(prepare_bundle(conversation_bundle("test:a", project_hint="alpha")))
    store.write_conversation(prepare_bundle(conversation_bundle("test:b", project_hint="beta")))
    return store


def test_notifications_are_listed_newest_first_with_their_finding_and_conversation(
    stored: SqlStore,
) -> None:
    stored.record_findings([_finding("test:a", "rm -rf on the home folder")])
    stored.record_findings([_finding("test:b", "Review requested", action="request_review")])
    # A low-severity warning notifies nobody.
    stored.record_findings([_finding("test:b", "A small thing", severity="low")])
    page = stored.notification_page()
    assert (page.total, page.unread) == (2, 2)
    newest, oldest = page.items
    assert newest.title == "Review requested"
    assert (newest.action, newest.project, newest.conversation_id) == (
        "request_review",
        "beta",
        "test:b",
    )
    assert (oldest.title, oldest.severity, oldest.rule, oldest.origin, oldest.status) == (
        "rm -rf on the home folder",
        "high",
        "destructive_command",
        "rule",
        "open",
    )
    assert oldest.finding_id == stored.finding(stored.resolve_finding_id(oldest.key)).finding_id
    assert stored.notification_page(project="alpha").items == (oldest,)


def test_pages_carry_the_total_of_all_pages_and_cover_every_notification_once(
    stored: SqlStore,
) -> None:
    stored.record_findings([_finding("test:a", f"destructive command {i}") for i in range(7)])
    seen: list[str] = []
    for offset in range(0, 7, 3):
        page = stored.notification_page(limit=3, offset=offset)
        assert page.total == 7
        seen += [n.key for n in page.items]
    assert len(seen) == len(set(seen)) == 7


def test_marking_some_read_leaves_the_others_unread_and_keeps_the_first_reading_time(
    stored: SqlStore,
) -> None:
    stored.record_findings([_finding("test:a", f"destructive command {i}") for i in range(3)])
    first, second, third = stored.notification_page().items
    assert stored.mark_notifications_read([first.key]) == [first.key]
    read_at = stored.notification(first.key).read_at
    assert read_at is not None
    # Reading it again changes nothing and reports nothing newly read.
    assert stored.mark_notifications_read([first.key, second.key]) == [second.key]
    assert stored.notification(first.key).read_at == read_at
    unread = stored.notification_page(unread_only=True)
    assert [n.key for n in unread.items] == [third.key]
    assert (unread.total, unread.unread, stored.unread_notification_count()) == (1, 1, 1)


def test_marking_all_read_clears_the_unread_count(stored: SqlStore) -> None:
    stored.record_findings([_finding("test:a", f"destructive command {i}") for i in range(4)])
    assert len(stored.mark_notifications_read(None)) == 4
    assert stored.unread_notification_count() == 0
    assert stored.mark_notifications_read(None) == []


def test_an_unknown_key_is_refused_by_name_and_nothing_is_marked(stored: SqlStore) -> None:
    stored.record_findings([_finding("test:a", "destructive command")])
    (known,) = stored.notification_page().items
    with pytest.raises(NotFoundError, match="'f00d'"):
        stored.mark_notifications_read([known.key, "f00d"])
    assert stored.unread_notification_count() == 1


def test_a_notification_is_found_by_a_unique_prefix_of_its_key_or_its_findings_id(
    stored: SqlStore,
) -> None:
    stored.record_findings([_finding("test:a", f"destructive command {i}") for i in range(2)])
    one, other = stored.notification_page().items
    assert stored.resolve_notification_key(one.key[:10]) == one.key
    assert stored.resolve_notification_key(one.finding_id[:10]) == one.key
    with pytest.raises(NotFoundError, match="no notification matches"):
        stored.resolve_notification_key("zz")
    with pytest.raises(NotFoundError, match="empty"):
        stored.resolve_notification_key(" ")
    common = 0
    while one.key[common] == other.key[common]:
        common += 1
    if common:
        with pytest.raises(NotFoundError, match="several"):
            stored.resolve_notification_key(one.key[:common])


def test_the_version_changes_when_a_notification_is_written_read_or_its_finding_changes(
    stored: SqlStore,
) -> None:
    empty = stored.notifications_version()
    stored.record_findings([_finding("test:a", "destructive command")])
    written = stored.notifications_version()
    assert written != empty
    assert stored.notifications_version() == written  # nothing changed, same version
    (notification,) = stored.notification_page().items
    stored.set_finding_status(notification.finding_id, "acknowledged")
    triaged = stored.notifications_version()
    assert triaged != written
    stored.mark_notifications_read(None)
    assert stored.notifications_version() != triaged


def test_notifications_since_a_time_leave_out_those_already_seen(stored: SqlStore) -> None:
    before = utcnow() - timedelta(seconds=1)
    stored.record_findings([_finding("test:a", f"destructive command {i}") for i in range(2)])
    first = stored.notifications_since(before)
    assert len(first) == 2
    newest = max(n.created_at for n in first)
    assert stored.notifications_since(newest, seen=[n.key for n in first]) == []
    stored.record_findings([_finding("test:b", "another one")])
    later = stored.notifications_since(newest, seen=[n.key for n in first])
    assert [n.title for n in later] == ["another one"]


def test_a_webhook_delivery_is_claimed_by_one_claimer_only(stored: SqlStore) -> None:
    stored.record_findings([_finding("test:a", "destructive command")])
    (pending,) = stored.pending_webhook_notifications()
    assert pending.webhook_state == "pending"
    stale_before = utcnow() - timedelta(minutes=10)
    (claimed,) = stored.claim_webhook_deliveries(stale_before=stale_before)
    assert claimed.key == pending.key
    assert claimed.webhook_state == "sending"
    assert stored.claim_webhook_deliveries(stale_before=stale_before) == []
    assert stored.pending_webhook_notifications() == []
    stored.record_webhook_outcome(claimed.key, "delivered", attempts=2)
    done = stored.notification(claimed.key)
    assert (done.webhook_state, done.webhook_attempts, done.webhook_error) == ("delivered", 2, None)


def test_a_claim_left_by_a_process_that_died_is_taken_over_once_stale(stored: SqlStore) -> None:
    stored.record_findings([_finding("test:a", "destructive command")])
    (claimed,) = stored.claim_webhook_deliveries(stale_before=utcnow() - timedelta(minutes=10))
    (again,) = stored.claim_webhook_deliveries(stale_before=utcnow() + timedelta(seconds=1))
    assert again.key == claimed.key


def test_an_outcome_recorded_only_from_a_state_leaves_a_row_that_moved_on(
    stored: SqlStore,
) -> None:
    stored.record_findings([_finding("test:a", "destructive command")])
    (pending,) = stored.pending_webhook_notifications()
    assert stored.record_webhook_outcome(pending.key, "skipped", only_from="pending")
    assert not stored.record_webhook_outcome(pending.key, "failed", only_from="pending")
    assert stored.notification(pending.key).webhook_state == "skipped"


def test_deleting_a_conversation_takes_its_notifications(stored: SqlStore) -> None:
    stored.record_findings([_finding("test:a", "destructive command")])
    stored.record_findings([_finding("test:b", "destructive command")])
    stored.delete_conversation("test:a")
    page = stored.notification_page()
    assert [n.conversation_id for n in page.items] == ["test:b"]
    assert page.unread == 1
