"""Heartbeat plans and suggestions over HTTP (SPEC HB-2, HB-3, HB-5, HB-6)."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.heartbeat.suggestions import make_suggestions
from proctor.store import SqlStore
from tests.api.conftest import Api

DAILY = {"name": "morning", "recurrence": "daily", "time": "09:00", "timezone": "Europe/Berlin"}


def _create(api: Api, **body: Any) -> dict[str, Any]:
    response = api.post("/api/plans", json={**DAILY, **body})
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def test_a_plan_is_created_listed_shown_and_deleted(api: Api) -> None:
    plan = _create(api)
    assert plan["schedule"] == "daily 09:00" and plan["scope"] == "all"
    assert plan["state"] == "enabled" and plan["next_run_at"]
    assert "lease_owner" not in plan

    weekly = _create(
        api, name="twice a week", recurrence="weekly", time="7:30", weekdays=["mon", 3]
    )
    assert weekly["schedule"] == "weekly mon,thu 07:30" and weekly["weekdays"] == [0, 3]

    page = api.get("/api/plans", params={"limit": 1}).json()
    assert page["total"] == 2 and [p["name"] for p in page["plans"]] == ["morning"]
    assert api.get("/api/plans/morning").json()["plan_id"] == plan["plan_id"]
    assert api.get(f"/api/plans/{plan['plan_id'][:8]}").json()["name"] == "morning"

    deleted = api.call("DELETE", "/api/plans/morning")
    assert deleted.status_code == 200 and deleted.json()["plan_id"] == plan["plan_id"]
    assert api.get("/api/plans/morning").status_code == 404
    assert api.call("DELETE", "/api/plans/morning").status_code == 404


def test_a_plan_is_updated_and_keeps_what_is_not_given(api: Api) -> None:
    _create(api, window_hours=24)
    changed = api.call(
        "PATCH", "/api/plans/morning", json={"recurrence": "weekly", "weekdays": ["fri"]}
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["schedule"] == "weekly fri 09:00"
    assert body["timezone"] == "Europe/Berlin" and body["window_hours"] == 24

    off = api.call("PATCH", "/api/plans/morning", json={"enabled": False}).json()
    assert off["enabled"] is False and off["state"] == "disabled"
    on = api.call("PATCH", "/api/plans/morning", json={"enabled": True, "no_window": True})
    assert on.json()["enabled"] is True and on.json()["window_hours"] is None


@pytest.mark.parametrize(
    "body",
    [
        {"recurrence": "weekly"},  # a weekly plan without weekdays
        {"weekdays": ["mon"]},  # weekdays on a daily plan
        {"timezone": "Mars/Olympus"},
    ],
)
def test_an_invalid_plan_is_refused_naming_the_field(api: Api, body: dict[str, Any]) -> None:
    refused = api.post("/api/plans", json={**DAILY, **body})
    assert 400 <= refused.status_code < 500
    detail = refused.json()["detail"]
    assert isinstance(detail, str) and ("weekdays" in detail or "timezone" in detail)
    assert api.get("/api/plans").json()["total"] == 0


def test_plan_bodies_and_names_are_validated(api: Api) -> None:
    for body in (
        {**DAILY, "time": "25:00:00"},
        {**DAILY, "weekdays": ["someday"]},
        {**DAILY, "colour": "red"},
        {"name": "x"},
    ):
        assert api.post("/api/plans", json=body).status_code == 422, body
    _create(api)
    duplicate = api.post("/api/plans", json=DAILY)
    assert 400 <= duplicate.status_code < 500 and "morning" in duplicate.json()["detail"]
    both = api.call("PATCH", "/api/plans/morning", json={"project": "p", "all_projects": True})
    assert 400 <= both.status_code < 500
    assert api.call("PATCH", "/api/plans/nope", json={"enabled": True}).status_code == 404


@pytest.fixture
def suggested(api: Api) -> list[dict[str, Any]]:
    """Suggestions made (rule text, no model) from the published review of the examples."""
    store: SqlStore = api.app.state.store_holder.get()
    result_id = api.get("/api/results").json()["results"][0]["result_id"]
    make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)
    found: list[dict[str, Any]] = api.get("/api/suggestions", params={"limit": 100}).json()[
        "suggestions"
    ]
    assert found
    return found


def test_suggestions_are_listed_by_status_and_shown(
    api: Api, suggested: list[dict[str, Any]]
) -> None:
    assert all(s["status"] == "open" for s in suggested)
    first = suggested[0]
    shown = api.get(f"/api/suggestions/{first['suggestion_id'][:8]}").json()
    assert shown == first
    page = api.get("/api/suggestions", params={"limit": 1, "offset": 1}).json()
    assert len(page["suggestions"]) <= 1
    if len(suggested) > 1:
        assert page["suggestions"][0]["suggestion_id"] == suggested[1]["suggestion_id"]
    assert api.get("/api/suggestions", params={"status": "accepted"}).json()["suggestions"] == []


def test_accepting_an_open_item_makes_a_task_and_ignoring_is_refused_after(
    api: Api, suggested: list[dict[str, Any]]
) -> None:
    item = next(s for s in suggested if s["kind"] == "open_item")
    url = f"/api/suggestions/{item['suggestion_id']}"
    accepted = api.post(f"{url}/accept")
    assert accepted.status_code == 200, accepted.text
    decision = accepted.json()
    assert decision["changed"] is True and decision["suggestion"]["status"] == "accepted"
    assert decision["task"]["status"] == "paused"
    again = api.post(f"{url}/accept").json()
    assert again["changed"] is False

    refused = api.post(f"{url}/ignore")
    assert 400 <= refused.status_code < 500 and refused.json()["detail"]
    listed = api.get("/api/suggestions", params={"status": "accepted"}).json()["suggestions"]
    assert [s["suggestion_id"] for s in listed] == [item["suggestion_id"]]


def test_an_ignored_suggestion_leaves_the_open_list(
    api: Api, suggested: list[dict[str, Any]]
) -> None:
    target = suggested[0]["suggestion_id"]
    ignored = api.post(f"/api/suggestions/{target}/ignore").json()
    assert ignored["suggestion"]["status"] == "ignored" and ignored["task"] is None
    still_open = api.get("/api/suggestions", params={"status": "open", "limit": 100}).json()
    assert target not in {s["suggestion_id"] for s in still_open["suggestions"]}


def test_unknown_suggestions_and_bad_filters_are_refused(api: Api) -> None:
    assert api.get("/api/suggestions/zzzz-none").status_code == 404
    assert api.post("/api/suggestions/zzzz-none/accept").status_code == 404
    assert api.get("/api/suggestions", params={"status": "maybe"}).status_code == 422
    assert api.get("/api/suggestions", params={"limit": 101}).status_code == 422
