"""Due processing on the real review pipeline with a controllable clock (SPEC HB-1, HB-3, HB-4).

No model connection is configured: reviews publish the structural graph and make no model
call, so a firing costs nothing but the review's own (zero) calls.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from proctor.errors import AppDisabledError, ConfigError, SuggestionError
from proctor.heartbeat import (
    draft_plan,
    run_due,
    run_now,
    save_plan,
    set_app_enabled,
)
from proctor.heartbeat._scheduler import _next_run
from proctor.ingest import ingest
from proctor.review import SemanticLayer
from proctor.store import SqlStore
from tests.conftest import EXAMPLES_DIR
from tests.heartbeat.conftest import START, Clock

DUE = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
"""09:00 in Berlin on the START day."""


def _no_model() -> tuple[SemanticLayer | None, str | None]:
    return None, "no model connection"


def _plan(store: SqlStore, name: str = "morning", **changes: object) -> None:
    fields: dict[str, object] = {
        "name": name,
        "recurrence": "daily",
        "time": "09:00",
        "timezone": "Europe/Berlin",
        "intervention": "memory_only",
    }
    fields.update(changes)
    save_plan(store, draft_plan(**fields), now=START)


def _pass(store: SqlStore, clock: Clock, owner: str = "worker:1", **kwargs: object) -> list:
    return run_due(
        store,
        now=clock(),
        owner=owner,
        semantic_factory=_no_model,
        phrasing_factory=lambda: None,
        clock=clock,
        **kwargs,  # type: ignore[arg-type]
    )


def test_nothing_runs_before_the_plan_is_due(examples_store: SqlStore, clock: Clock) -> None:
    _plan(examples_store)

    clock.now = DUE - timedelta(seconds=1)

    assert _pass(examples_store, clock) == []
    assert examples_store.heartbeat_runs() == []
    assert examples_store.review_runs() == []


def test_a_disabled_app_claims_nothing_and_loses_nothing(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store)
    set_app_enabled(examples_store, False)
    clock.now = DUE + timedelta(hours=3)

    assert _pass(examples_store, clock) == []

    plan = examples_store.plan("morning")
    assert plan.next_run_at == DUE and plan.lease_owner is None
    assert examples_store.heartbeat_runs() == [] and examples_store.review_runs() == []
    with pytest.raises(AppDisabledError, match="running a plan now"):
        run_now(examples_store, "morning", now=clock(), owner="cli:1", semantic_factory=_no_model)
    set_app_enabled(examples_store, True)
    assert [o.status for o in _pass(examples_store, clock)] == ["completed"]


def test_a_due_plan_reviews_once_then_finds_no_change_without_a_model_call(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store)
    clock.now = DUE + timedelta(minutes=1)

    first = _pass(examples_store, clock)

    assert [(o.status, o.attempt, o.model_calls) for o in first] == [("completed", 1, 0)]
    review = examples_store.review_run(first[0].review_run_id)
    assert (review.trigger, review.status, review.result_id) == (
        "heartbeat",
        "completed",
        first[0].result_id,
    )
    assert review.time_from is None  # no window: everything new since the last review
    plan = examples_store.plan("morning")
    assert plan.next_run_at == DUE + timedelta(days=1)
    assert (plan.lease_owner, plan.last_run_at) == (None, clock())
    assert _pass(examples_store, clock) == []  # the same morning: already done

    clock.now = DUE + timedelta(days=1)
    second = _pass(examples_store, clock)

    assert [(o.status, o.model_calls, o.result_id) for o in second] == [("no_change", 0, None)]
    entries = examples_store.activity("morning")
    assert [e.outcome for e in entries] == ["no change (no model call)", "updated"]
    assert entries[1].summary and entries[1].result_id == first[0].result_id
    assert entries[1].phase == "done" and entries[1].scope == "all"


def test_a_crashed_worker_leaves_the_plan_to_be_reclaimed_after_its_lease_expires(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store)
    clock.now = DUE
    crashed = examples_store.claim_due_plans(clock(), "worker:dead", 600, next_run=_next_run)
    assert len(crashed) == 1  # … and the worker died before reviewing anything

    clock.advance(seconds=599)
    assert _pass(examples_store, clock, owner="worker:2", lease_seconds=600) == []

    clock.advance(seconds=2)
    retried = _pass(examples_store, clock, owner="worker:2", lease_seconds=600)

    assert [(o.status, o.attempt) for o in retried] == [("completed", 2)]
    runs = examples_store.heartbeat_runs(plan="morning")
    assert [(r.attempt, r.status, r.owner, r.due_at) for r in runs] == [
        (2, "completed", "worker:2", DUE),
        (1, "abandoned", "worker:dead", DUE),
    ]
    assert examples_store.plan("morning").next_run_at == DUE + timedelta(days=1)


def test_a_window_plan_reviews_only_the_last_hours_of_its_due_time(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store, window_hours=24)
    clock.now = DUE + timedelta(minutes=5)

    (outcome,) = _pass(examples_store, clock)

    review = examples_store.review_run(outcome.review_run_id)
    assert review.time_from == DUE - timedelta(hours=24)


def test_a_review_that_cannot_start_is_recorded_failed_and_the_lease_freed(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store)
    clock.now = DUE

    def broken() -> tuple[SemanticLayer | None, str | None]:
        raise ConfigError("model connection 'gone' was deleted")

    outcomes = run_due(
        examples_store, now=clock(), owner="worker:1", semantic_factory=broken, clock=clock
    )

    assert [(o.status, o.error) for o in outcomes] == [
        ("failed", "model connection 'gone' was deleted")
    ]
    assert examples_store.plan("morning").lease_owner is None
    (entry,) = examples_store.activity("morning")
    assert (entry.outcome, entry.error) == ("failed", "model connection 'gone' was deleted")


def test_plans_run_one_after_the_other_and_run_now_leaves_the_schedule(
    examples_store: SqlStore, clock: Clock
) -> None:
    project = examples_store.projects()[0].name
    _plan(examples_store, "all projects")
    _plan(examples_store, "one project", scope=project, time="09:30")
    clock.now = DUE + timedelta(hours=1)

    outcomes = _pass(examples_store, clock)

    assert [o.plan_name for o in outcomes] == ["all projects", "one project"]
    now_outcome = run_now(
        examples_store, "one project", now=clock(), owner="cli:1", semantic_factory=_no_model
    )
    assert now_outcome.status == "no_change"
    assert examples_store.plan("one project").next_run_at == datetime(
        2026, 11, 21, 8, 30, tzinfo=UTC
    )


@pytest.mark.slow
def test_a_suggest_plan_records_suggestions_after_a_published_review(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store, intervention="suggest")
    clock.now = DUE

    (outcome,) = _pass(examples_store, clock)

    assert outcome.status == "completed"
    run = examples_store.heartbeat_run(outcome.heartbeat_id)
    assert (run.phase, run.suggestions, run.result_id) == (
        "done",
        outcome.suggestions,
        outcome.result_id,
    )


def test_a_suggestion_failure_keeps_the_published_result(
    examples_store: SqlStore, clock: Clock
) -> None:
    _plan(examples_store, intervention="suggest")
    clock.now = DUE

    def failing() -> None:
        raise SuggestionError("the phrasing call failed")

    (outcome,) = run_due(
        examples_store,
        now=clock(),
        owner="worker:1",
        semantic_factory=_no_model,
        phrasing_factory=failing,
        clock=clock,
    )

    assert (outcome.status, outcome.error) == ("suggestions_failed", "the phrasing call failed")
    assert outcome.result_id is not None
    assert examples_store.result(outcome.result_id).result_id == outcome.result_id
    (entry,) = examples_store.activity("morning")
    assert entry.outcome == "updated, suggestions failed"
    assert entry.result_id == outcome.result_id


def test_heartbeat_reviews_and_manual_reviews_share_one_activity_list(
    empty_store: SqlStore, clock: Clock
) -> None:
    from proctor.review import ReviewRequest, start_review

    ingest(empty_store, [EXAMPLES_DIR])
    set_app_enabled(empty_store, True)
    manual = start_review(empty_store, ReviewRequest(), semantic=None)
    _plan(empty_store)
    clock.now = DUE

    (outcome,) = _pass(empty_store, clock)

    entries = empty_store.activity()
    kinds = {e.kind: e for e in entries}
    assert set(kinds) == {"manual", "heartbeat"}
    assert kinds["manual"].review_run_id == manual.run_id
    assert kinds["heartbeat"].outcome == "no change (no model call)"
    assert outcome.status == "no_change"
