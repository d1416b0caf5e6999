"""The activity list over HTTP (SPEC HB-7): each line says its outcome in words."""

from __future__ import annotations

from pathlib import Path

from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from tests.api.conftest import Api


def test_each_activity_line_says_its_outcome_in_words(database: Path) -> None:
    store = open_store(database)
    try:
        again = start_review(store, ReviewRequest(), semantic=None)  # nothing new since
    finally:
        store.close()
    api = Api(database)
    try:
        lines = api.get("/api/activity").json()["activity"]
    finally:
        api.close()
    assert again.status == "no_change"
    assert [(line["kind"], line["status"], line["outcome"]) for line in lines] == [
        ("manual", "no_change", "no change (no model call)"),
        ("manual", "completed", "updated"),
    ]
    assert lines[1]["result_id"] and lines[1]["summary"]


def test_the_plan_filter_keeps_only_that_plans_runs_and_refuses_an_unknown_plan(
    api: Api,
) -> None:
    created = api.post(
        "/api/plans", json={"name": "nightly", "recurrence": "daily", "time": "02:00"}
    )
    assert created.status_code == 201
    assert api.get("/api/activity", params={"plan": "nightly"}).json()["activity"] == []
    unknown = api.get("/api/activity", params={"plan": "no-such-plan"})
    assert unknown.status_code == 404
    assert "no-such-plan" in unknown.json()["detail"]


def test_activity_paging_skips_and_bounds_the_lines(api: Api) -> None:
    assert len(api.get("/api/activity", params={"limit": 1}).json()["activity"]) == 1
    assert api.get("/api/activity", params={"offset": 1}).json()["activity"] == []
    assert api.get("/api/activity", params={"limit": 0}).status_code == 422
