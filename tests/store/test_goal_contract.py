"""Goal versions and intent labels in the store on every backend (SPEC GOAL-1, GOAL-2)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from proctor.store import SqlStore
from proctor.store._goal_store import GoalVersion, IntentLabel

AT = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _version(number: int, goal: str = "Fix rounding", target: str = "conv-1") -> GoalVersion:
    return GoalVersion(target, number, goal, f"{number:032x}", f"{target}:m{number}", "initial", AT)


def _label(source: str, intent: str = "continue", target: str = "conv-1") -> IntentLabel:
    return IntentLabel(
        source_id=source,
        target_id=target,
        intent=intent,  # type: ignore[arg-type]
        confidence=0.25,
        low_confidence=True,
        goal_version=1,
        model=None,
        prompt_version=1,
        created_at=AT,
    )


def test_goal_versions_are_read_back_in_order_and_the_latest_is_current(store: SqlStore) -> None:
    written = store.record_goal_versions("conv-1", [_version(2, "Fix it well"), _version(1)])

    assert [v.version for v in written] == [2, 1]
    assert store.goal_versions("conv-1") == [_version(1), _version(2, "Fix it well")]
    assert store.current_goal("conv-1") == _version(2, "Fix it well")
    assert store.current_goal("conv-2") is None
    assert store.goal_versions("conv-2") == []


def test_recording_goal_versions_again_writes_nothing_and_never_rewrites(store: SqlStore) -> None:
    store.record_goal_versions("conv-1", [_version(1)])

    again = store.record_goal_versions("conv-1", [_version(1, "Something else"), _version(2)])

    assert again == [_version(2)]
    assert [v.goal for v in store.goal_versions("conv-1")] == ["Fix rounding", "Fix rounding"]


def test_goal_versions_of_another_target_are_refused(store: SqlStore) -> None:
    with pytest.raises(ValueError, match="conv-2"):
        store.record_goal_versions("conv-1", [_version(1, target="conv-2")])
    assert store.goal_versions("conv-1") == []


def test_the_store_stamps_a_version_recorded_without_a_time(store: SqlStore) -> None:
    unstamped = GoalVersion("conv-1", 1, "Fix rounding", "0" * 32, None, "task")
    store.record_goal_versions("conv-1", [unstamped])

    (stored,) = store.goal_versions("conv-1")
    assert stored.created_at is not None
    assert stored.created_at.tzinfo is not None
    assert stored.source_id is None


def test_intent_labels_round_trip_and_each_turn_is_labelled_once(store: SqlStore) -> None:
    first = store.record_intent_labels([_label("conv-1:m1"), _label("conv-1:m2", "refine")])

    again = store.record_intent_labels(
        [_label("conv-1:m2", "cancel"), _label("conv-1:m3", "expand"), _label("conv-1:m3")]
    )

    assert [label.source_id for label in first] == ["conv-1:m1", "conv-1:m2"]
    assert again == [_label("conv-1:m3", "expand")]
    labels = {label.source_id: label for label in store.intent_labels("conv-1")}
    assert labels == {
        "conv-1:m1": _label("conv-1:m1"),
        "conv-1:m2": _label("conv-1:m2", "refine"),
        "conv-1:m3": _label("conv-1:m3", "expand"),
    }
    assert store.intent_labels("conv-2") == []
    assert store.record_intent_labels([]) == []
