"""The review workspace (SPEC UI-3, REV-5, REV-6): run, follow, pause, resume and cancel
reviews from the browser, and read the latest result."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from proctor.heartbeat import set_app_enabled
from proctor.review import ReviewRequest, begin_review
from proctor.store import ReviewRunRecord, SqlStore, open_store
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import Served


@pytest.fixture(scope="module")
def served(served_copy: Served) -> Served:
    return served_copy


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


@pytest.fixture
def store(served: Served) -> Iterator[SqlStore]:
    """The server's store, opened by this test process (another process, to the server)."""
    opened = open_store(served.database)
    try:
        yield opened
    finally:
        opened.close()


def _hold_a_run(store: SqlStore) -> ReviewRunRecord:
    """A review that holds the slot in this process: the server sees a run executing elsewhere."""
    return begin_review(store, ReviewRequest(reanalyze=True), semantic=None)


def _history_row(page: Page, run_id: str) -> Locator:
    return page.locator(f'#history tr[data-run="{run_id}"]')


def _open(page: Page) -> None:
    page.goto("/#/reviews")
    expect(page.get_by_role("heading", name="Run a review")).to_be_visible()


def test_the_workspace_shows_the_latest_result_its_digest_and_open_items(
    page: Page, server: str
) -> None:
    # Other tests of the module publish results and add runs: what the page must show is
    # what the API holds now, and the seeded review's result (the oldest) is opened by name.
    results = httpx.get(timeout=30, url=f"{server}/api/results", params={"limit": 100}).json()
    newest, seeded = results["results"][0], results["results"][-1]
    runs = httpx.get(timeout=30, url=f"{server}/api/reviews", params={"limit": 100}).json()
    _open(page)
    expect(page.get_by_role("heading", name="Latest result")).to_be_visible()
    expect(page.locator("#result")).to_contain_text(newest["result_id"][:8])
    expect(page.locator("#result-summary")).to_contain_text(re.compile(r"Read (\d+) of \1 sources"))
    expect(page.locator("#live-state")).to_contain_text("No review is running")
    expect(page.locator("#history tbody tr")).to_have_count(min(len(runs["reviews"]), 10))
    expect(page.locator("#history")).to_contain_text("completed")
    link = page.get_by_role("link", name="Open in the story graph")
    expect(link).to_have_attribute("href", re.compile(r"^#/graph/[0-9a-f-]{36}$"))
    screenshot(page, "reviews-desktop", full_page=True)

    page.goto(f"/#/reviews?result={seeded['result_id']}")
    expect(page.locator("#result")).to_contain_text(seeded["result_id"][:8])
    expect(page.locator("#result-summary")).to_contain_text(re.compile(r"Read (\d+) of \1 sources"))
    expect(page.locator("#result-digest")).to_contain_text("5 open item(s) reported")
    expect(page.locator("#open-items li")).to_have_count(5)
    expect(page.locator("#open-items")).to_contain_text("pytest still failing")


def test_a_review_started_from_the_page_runs_to_completion(page: Page, server: str) -> None:
    _open(page)
    before = httpx.get(timeout=30, url=f"{server}/api/results").json()["results"][0]["result_id"]
    page.get_by_label("Project").select_option("ledger-sync")
    page.get_by_label("Re-read everything").check()
    page.get_by_label("Batch size").fill("5")
    page.get_by_role("button", name="Run review").click()
    expect(page.locator("#history tbody tr")).to_have_count(2)
    first = page.locator("#history tbody tr").first
    expect(first).to_contain_text("ledger-sync")
    expect(first).to_contain_text("completed", timeout=30_000)
    expect(page.locator("#live-state")).to_contain_text("No review is running")
    run = httpx.get(timeout=30, url=f"{server}/api/reviews", params={"limit": 1}).json()["reviews"][
        0
    ]
    assert run["status"] == "completed" and run["reanalyze"] is True
    assert run["batches_total"] > 1 and run["batches_done"] == run["batches_total"]
    assert run["result_id"] and run["result_id"] != before
    # The workspace now shows the new result.
    expect(page.locator("#result")).to_contain_text(run["result_id"][:8])
    expect(page.locator("#results tbody tr")).to_have_count(2)


def test_a_run_held_elsewhere_is_shown_live_and_a_second_start_is_refused_as_busy(
    page: Page, store: SqlStore
) -> None:
    run = _hold_a_run(store)
    try:
        _open(page)
        expect(page.locator("#live-state")).to_have_text("running")
        expect(page.locator("#live-phase")).to_have_text("reading")
        assert run.sources_total > 0
        expect(page.locator("#live")).to_contain_text(f"0 of {run.sources_total}")
        expect(page.locator("#live")).to_contain_text("Executed by another Proctor process")
        page.get_by_role("button", name="Run review").click()
        problem = page.locator("#start-problem [role=alert]")
        expect(problem).to_contain_text(f"BUSY: review run {run.run_id[:8]}")
        screenshot(page, "reviews-running-desktop")
    finally:
        store.set_review_status(run.run_id, "cancelled", finished=True)
        store.release_review_slot(run.run_id)


def test_pause_then_resume_from_the_keyboard_follows_the_run_to_its_end(
    page: Page, store: SqlStore, server: str
) -> None:
    run = _hold_a_run(store)
    try:
        _open(page)
        pause = page.locator("#live").get_by_role("button", name="Pause")
        pause.focus()
        page.keyboard.press("Enter")
        # The worker (this test) has not stopped yet: the run is pausing.
        expect(page.locator("#live-state")).to_have_text("pausing")
        expect(page.locator("#live").get_by_role("button", name="Pause")).to_have_count(0)
    finally:
        store.release_review_slot(run.run_id)  # the worker stops after its batch
    row = _history_row(page, run.run_id)
    expect(page.locator("#live-state")).to_contain_text("No review is running")
    expect(row).to_contain_text("paused")
    resume = row.get_by_role("button", name="Resume")
    resume.focus()
    page.keyboard.press("Enter")
    expect(row).to_contain_text("completed", timeout=30_000)
    shown = httpx.get(timeout=30, url=f"{server}/api/reviews/{run.run_id}").json()
    assert shown["status"] == "completed" and shown["result_id"]


def test_a_focused_resume_keeps_the_focus_when_a_poll_redraws_the_history(
    page: Page, store: SqlStore
) -> None:
    """A keyboard user tabs to Resume while another run is followed: each poll redraws the
    history, and the focus must stay on that run's Resume for Enter to press it."""
    paused = _hold_a_run(store)
    store.set_review_status(paused.run_id, "paused")
    store.release_review_slot(paused.run_id)
    running = _hold_a_run(store)  # the page polls (and redraws the history) while it runs
    try:
        _open(page)
        expect(page.locator("#live-state")).to_have_text("running")
        resume = _history_row(page, paused.run_id).get_by_role("button", name="Resume")
        resume.focus()
        for _ in range(2):  # two redraws by the poll, each with the focus on Resume
            page.locator("#history table").evaluate("(table) => { table.dataset.drawn = 'old'; }")
            expect(page.locator('#history table[data-drawn="old"]')).to_have_count(0)
            focused = page.evaluate(
                "() => [document.activeElement.closest('tr')?.dataset.run ?? null,"
                " document.activeElement.dataset.verb ?? null]"
            )
            assert focused == [paused.run_id, "resume"], focused
    finally:
        store.set_review_status(running.run_id, "cancelled", finished=True)
        store.release_review_slot(running.run_id)
        store.set_review_status(paused.run_id, "cancelled", finished=True)


def test_cancel_shows_cancelling_until_the_worker_stopped_and_cannot_be_resumed(
    page: Page, store: SqlStore
) -> None:
    run = _hold_a_run(store)
    try:
        _open(page)
        page.locator("#live").get_by_role("button", name="Cancel").click()
        expect(page.locator("#live-state")).to_have_text("cancelling")
        expect(page.locator("#live").get_by_role("button", name="Cancel")).to_have_count(0)
    finally:
        store.release_review_slot(run.run_id)
    row = _history_row(page, run.run_id)
    expect(row).to_contain_text("cancelled")
    expect(row.get_by_role("button")).to_have_count(0)


def test_a_start_refused_because_the_app_is_off_shows_the_apis_sentence(
    page: Page, store: SqlStore, server: str
) -> None:
    runs_before = len(
        httpx.get(timeout=30, url=f"{server}/api/reviews", params={"limit": 100}).json()["reviews"]
    )
    set_app_enabled(store, False)
    try:
        _open(page)
        page.get_by_role("button", name="Run review").click()
        problem = page.locator("#start-problem [role=alert]")
        expect(problem).to_contain_text("the supervisor app is disabled")
        expect(problem).to_contain_text("proctor app enable")
    finally:
        set_app_enabled(store, True)
    runs_after = len(
        httpx.get(timeout=30, url=f"{server}/api/reviews", params={"limit": 100}).json()["reviews"]
    )
    assert runs_after == runs_before


def test_polling_runs_only_while_a_review_is_active_and_stops_when_the_page_is_left(
    fresh_page: Page, store: SqlStore
) -> None:
    page = fresh_page  # the fake clock stays installed in its context
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "/api/reviews/execution" in r.url else None)
    page.clock.install()
    run = _hold_a_run(store)
    try:
        _open(page)
        expect(page.locator("#live-state")).to_have_text("running")
        with page.expect_request("**/api/reviews/execution"):
            page.clock.run_for(2_000)
        page.get_by_role("link", name="Activity").click()
        expect(page.get_by_role("heading", name="Activity")).to_be_visible()
        counted = len(polls)
        page.clock.run_for(30_000)
        # A round trip through the page: any poll the timers started has been sent by now.
        page.evaluate("() => fetch('/api/health').then((r) => r.json())")
        assert len(polls) == counted, "the workspace kept polling after it was left"
    finally:
        store.set_review_status(run.run_id, "cancelled", finished=True)
        store.release_review_slot(run.run_id)


def test_the_workspace_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    _open(page)
    expect(page.locator("#open-items li").first).to_be_visible()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    expect(page.get_by_role("button", name="Run review")).to_be_in_viewport()
    screenshot(page, "reviews-375")
