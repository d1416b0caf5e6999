"""Heartbeat plans, leases, heartbeat runs and activity in the store on every backend (HB-2, HB-3, HB-7)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from proctor.errors import BusyError, ConfigError, NotFoundError
from proctor.store import SqlStore
from proctor.store import _schema as t
from proctor.store._heartbeat_records import HeartbeatPlan, PlanValues

AT = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _values(name: str = "morning", **changes: object) -> PlanValues:
    fields: dict[str, object] = {
        "name": name,
        "project": None,
        "recurrence": "daily",
        "time_of_day": "09:00",
        "weekdays": (),
        "timezone": "UTC",
        "enabled": True,
        "intervention": "suggest",
        "window_hours": None,
        "next_run_at": AT,
    }
    fields.update(changes)
    return PlanValues(**fields)  # type: ignore[arg-type]


def _tomorrow(plan: HeartbeatPlan, after: datetime) -> datetime:
    return after.replace(hour=9, minute=0, second=0, microsecond=0) + timedelta(days=1)


def test_a_saved_plan_is_found_by_name_and_id_prefix(store: SqlStore) -> None:
    plan = store.create_plan(_values(weekdays=(0, 3), recurrence="weekly"))

    assert store.plan("morning") == plan
    assert store.plan(plan.plan_id[:8]) == plan
    assert plan.weekdays == (0, 3)
    assert plan.scope == "all"
    assert plan.next_run_at == AT
    assert plan.lease_owner is None and plan.lease_attempt == 0
    assert [p.name for p in store.plans()] == ["morning"]


def test_a_plan_name_is_unique_and_an_unknown_plan_is_not_found(store: SqlStore) -> None:
    store.create_plan(_values())
    with pytest.raises(ConfigError, match="exists"):
        store.create_plan(_values())
    with pytest.raises(NotFoundError, match="proctor plans list"):
        store.plan("evening")
    with pytest.raises(NotFoundError, match="no project"):
        store.create_plan(_values("evening", project="nowhere"))


def test_updating_a_plan_replaces_its_settings_and_keeps_its_id(store: SqlStore) -> None:
    plan = store.create_plan(_values())

    updated = store.update_plan("morning", _values("dawn", time_of_day="06:00", enabled=False))

    assert updated.plan_id == plan.plan_id
    assert (updated.name, updated.time_of_day, updated.enabled) == ("dawn", "06:00", False)
    assert store.delete_plan("dawn").plan_id == plan.plan_id
    assert store.plans() == []


def test_a_due_plan_is_claimed_once_with_a_lease_and_its_next_run_advanced(
    store: SqlStore,
) -> None:
    store.create_plan(_values())
    store.create_plan(_values("later", next_run_at=AT + timedelta(hours=1)))
    store.create_plan(_values("off", enabled=False))

    claims = store.claim_due_plans(AT, "host:1", 600, next_run=_tomorrow)

    assert [c.plan.name for c in claims] == ["morning"]
    claim = claims[0]
    assert (claim.attempt, claim.owner, claim.due_at) == (1, "host:1", AT)
    assert claim.plan.lease_owner == "host:1"
    assert claim.plan.next_run_at == AT + timedelta(days=1)
    assert claim.lease_expires_at == AT + timedelta(seconds=600)
    run = store.heartbeat_run(claim.heartbeat_id[:8])
    assert (run.status, run.phase, run.attempt, run.due_at) == ("claimed", "claimed", 1, AT)
    assert store.claim_due_plans(AT, "host:2", 600, next_run=_tomorrow) == []


def test_a_crashed_owners_plan_is_reclaimed_after_the_lease_expires(store: SqlStore) -> None:
    store.create_plan(_values())
    first = store.claim_due_plans(AT, "host:1", 600, next_run=_tomorrow)[0]

    # host:1 "crashes": it never releases. Before expiry nobody may take the plan.
    assert (
        store.claim_due_plans(AT + timedelta(seconds=599), "host:2", 600, next_run=_tomorrow) == []
    )
    later = AT + timedelta(seconds=601)
    again = store.claim_due_plans(later, "host:2", 600, next_run=_tomorrow)

    assert [c.attempt for c in again] == [2]
    assert again[0].due_at == AT
    assert again[0].plan.next_run_at == AT + timedelta(days=1)
    abandoned = store.heartbeat_run(first.heartbeat_id)
    assert abandoned.status == "abandoned" and "host:1" in (abandoned.error or "")
    assert not store.release_plan_lease(first.plan.plan_id, "host:1", at=later)
    assert store.release_plan_lease(first.plan.plan_id, "host:2", at=later)
    released = store.plan("morning")
    assert (released.lease_owner, released.lease_attempt, released.last_run_at) == (None, 0, later)


def test_a_plan_run_now_is_refused_while_its_lease_is_held(store: SqlStore) -> None:
    store.create_plan(_values(next_run_at=AT + timedelta(hours=5)))

    claim = store.claim_plan_now("morning", AT, "host:1", 600)

    assert claim.due_at == AT and claim.plan.next_run_at == AT + timedelta(hours=5)
    with pytest.raises(BusyError, match="running now"):
        store.claim_plan_now("morning", AT, "host:2", 600)


def test_a_heartbeat_outcome_sets_only_the_fields_given(store: SqlStore) -> None:
    store.create_plan(_values())
    claim = store.claim_due_plans(AT, "host:1", 600, next_run=_tomorrow)[0]

    store.set_heartbeat_outcome(
        claim.heartbeat_id, status="running", phase="reviewing", finished=False
    )
    run = store.set_heartbeat_outcome(
        claim.heartbeat_id,
        status="suggestions_failed",
        phase="done",
        error="phrasing failed",
        at=AT,
    )

    assert (run.status, run.phase, run.error, run.finished_at) == (
        "suggestions_failed",
        "done",
        "phrasing failed",
        AT,
    )
    retried = store.set_heartbeat_outcome(
        claim.heartbeat_id, status="completed", phase="done", suggestions=3
    )
    assert (retried.error, retried.suggestions) == ("phrasing failed", 3)
    assert [r.heartbeat_id for r in store.heartbeat_runs(plan="morning")] == [claim.heartbeat_id]


def _manual_review(store: SqlStore, run_id: str, at: datetime, status: str = "completed") -> None:
    with store._write() as c:
        c.execute(
            insert(t.review_runs).values(
                run_id=run_id,
                scope_key="all",
                trigger="manual",
                reanalyze=False,
                status=status,
                active=False,
                options={},
                sources_total=0,
                sources_done=0,
                batches_total=0,
                batches_done=0,
                model_calls=0,
                input_tokens=0,
                output_tokens=0,
                created_at=at,
                updated_at=at,
                finished_at=at,
            )
        )


def test_activity_lists_heartbeats_and_manual_reviews_newest_first(store: SqlStore) -> None:
    store.create_plan(_values())
    store.create_plan(_values("other"))
    claims = store.claim_due_plans(AT, "host:1", 600, next_run=_tomorrow)
    _manual_review(store, "manual-1", AT + timedelta(minutes=5), status="no_change")

    entries = store.activity()

    assert [e.kind for e in entries] == ["manual", "heartbeat", "heartbeat"]
    assert entries[0].outcome == "no change (no model call)"
    assert entries[0].started_at == AT + timedelta(minutes=5)
    assert {e.plan_name for e in entries[1:]} == {"morning", "other"}
    assert {e.activity_id for e in entries[1:]} == {c.heartbeat_id for c in claims}


def test_the_activity_plan_filter_is_applied_before_pagination(store: SqlStore) -> None:
    store.create_plan(_values())
    store.create_plan(_values("other"))
    for hour in range(3):
        now = AT + timedelta(days=hour)
        for claim in store.claim_due_plans(now, "host:1", 600, next_run=_tomorrow):
            store.release_plan_lease(claim.plan.plan_id, "host:1", at=now)
    _manual_review(store, "manual-1", AT + timedelta(days=9))

    page = store.activity("morning", limit=2, offset=1)

    assert [e.plan_name for e in page] == ["morning", "morning"]
    assert [e.started_at for e in page] == [AT + timedelta(days=1), AT]
    assert len(store.activity(limit=100)) == 7
    assert store.activity("other", limit=5, offset=3) == []


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (101, 0), (10, -1), (10, 100_001)])
def test_activity_refuses_a_limit_or_offset_out_of_range(
    store: SqlStore, limit: int, offset: int
) -> None:
    with pytest.raises(ConfigError, match="activity"):
        store.activity(limit=limit, offset=offset)
