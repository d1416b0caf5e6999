"""Activity (SPEC UI-3, HB-7): heartbeat runs and manual reviews with their outcomes, a plan
filter and paging, in a real browser."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from proctor._util.clock import utcnow
from proctor.heartbeat import run_now, worker_owner
from proctor.store import open_store
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import Served

MORNING_RUNS = 21


@pytest.fixture(scope="module")
def served(served_copy: Served) -> Served:
    """Two plans: "morning" ran 21 times and "evening" once, besides the seeded manual review."""
    running = served_copy
    for name, project in (("morning", "ledger-sync"), ("evening", "invoice-service")):
        body = {"name": name, "recurrence": "daily", "time": "07:00", "project": project}
        assert httpx.post(timeout=30, url=f"{running.url}/api/plans", json=body).status_code == 201
    store = open_store(running.database)
    try:
        for _ in range(MORNING_RUNS):
            run_now(store, "morning", now=utcnow(), owner=worker_owner())
        run_now(store, "evening", now=utcnow(), owner=worker_owner())
    finally:
        store.close()
    return running


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


def _cards(page: Page) -> Locator:
    return page.locator("#activity-list article.activity")


def test_activity_lists_heartbeat_runs_and_manual_reviews_with_their_outcomes(
    page: Page, server: str
) -> None:
    newest = httpx.get(timeout=30, url=f"{server}/api/activity", params={"limit": 20}).json()[
        "activity"
    ]
    page.goto("/#/activity")
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    expect(_cards(page)).to_have_count(20)
    first = _cards(page).first
    # Newest first: the evening plan's run, its outcome in the API's words, a link to its plan.
    expect(first.get_by_role("heading")).to_have_text("Plan evening")
    expect(first.locator(".outcome")).to_have_text(newest[0]["outcome"])
    expect(first.get_by_role("link", name="evening")).to_have_attribute(
        "href", f"#/plans/{newest[0]['plan_id']}"
    )
    screenshot(page, "activity-desktop")


def test_paging_reaches_the_oldest_line_the_manual_review_and_its_result(page: Page) -> None:
    page.goto("/#/activity")
    expect(_cards(page)).to_have_count(20)
    next_page = page.get_by_role("button", name="Next")
    next_page.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#/activity\?offset=20$"))
    expect(_cards(page)).to_have_count(MORNING_RUNS + 2 - 20)
    manual = _cards(page).last
    expect(manual.get_by_role("heading")).to_have_text("Manual review")
    expect(manual.locator(".outcome")).to_have_text("updated")
    expect(page.get_by_role("button", name="Next")).to_be_disabled()
    manual.get_by_role("link", name=re.compile(r"^Result [0-9a-f]{8}$")).click()
    expect(page).to_have_url(re.compile(r"#/reviews\?result=[0-9a-f-]{36}$"))
    expect(page.get_by_role("heading", name="Result", exact=True)).to_be_visible()


def test_the_plan_filter_keeps_only_that_plans_runs(page: Page, server: str) -> None:
    plans = {
        p["name"]: p["plan_id"]
        for p in httpx.get(timeout=30, url=f"{server}/api/plans").json()["plans"]
    }
    page.goto("/#/activity")
    expect(_cards(page)).to_have_count(20)
    page.get_by_label("Show").select_option(label="Plan: evening")
    expect(_cards(page)).to_have_count(1)
    assert parse_qs(urlsplit(page.url).fragment.split("?", 1)[1]) == {"plan": [plans["evening"]]}
    expect(_cards(page).first.get_by_role("heading")).to_have_text("Plan evening")
    expect(page.get_by_role("navigation", name="Pages")).to_have_count(0)
    # The filter is kept in the address: a reload shows the same filtered page.
    page.reload()
    expect(page.get_by_label("Show")).to_have_value(plans["evening"])
    expect(_cards(page)).to_have_count(1)
    page.get_by_label("Show").select_option(label="All activity")
    expect(_cards(page)).to_have_count(20)


def test_activity_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    page.goto("/#/activity")
    expect(_cards(page).first).to_be_visible()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    expect(page.get_by_label("Show")).to_be_in_viewport()
    screenshot(page, "activity-375")
