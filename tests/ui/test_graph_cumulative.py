"""The story graph page after two reviews of one scope, in a real browser: by default it
shows the whole graph as of the newest review (both reviews' events, in their lanes), and
"only this review's changes" narrows it to the newest review's own events. The page is
also held to axe-core with the chart drawn, an entity selected and a window brushed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from tests.conftest import EXAMPLES_DIR
from tests.ui.accessibility import assert_accessible
from tests.ui.conftest import PHONE
from tests.ui.private_server import serve_copy


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One example reviewed, then the other ingested and reviewed: two results of a scope."""
    path = tmp_path_factory.mktemp("two-reviews") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [EXAMPLES_DIR / "claude-code"])
        start_review(store, ReviewRequest(), semantic=None)
        ingest(store, [EXAMPLES_DIR / "codex"])
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    with serve_copy(path, tmp_path_factory.mktemp("two-reviews-home")) as served:
        yield served.url


def _results(page: Page) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = page.request.get("/api/results").json()["results"]
    return results


def _events(page: Page, result_id: str) -> set[str]:
    graph = page.request.get(f"/api/results/{result_id}/graph", params={"limit": 500}).json()
    return {e["event_id"] for e in graph["events"]}


def _shown(page: Page) -> set[str]:
    found: list[str] = page.locator("#panel-timeline .event").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    return set(found)


def _ready(page: Page) -> None:
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    expect(page.locator("#panel-timeline .event").first).to_be_visible()


def test_the_page_shows_both_reviews_events_and_this_review_s_changes_as_a_filter(
    page: Page,
) -> None:
    newest, older = _results(page)
    first, second = _events(page, older["result_id"]), _events(page, newest["result_id"])
    assert first and second and not first & second
    page.goto("/#/graph?grain=events")
    _ready(page)
    expect(page.locator("#graph-result")).to_have_value(newest["result_id"])
    expect(page.locator("#graph-scope")).to_contain_text("2 reviews merged")
    expect(page.locator("#panel-timeline .event")).to_have_count(len(first | second))
    assert _shown(page) == first | second
    marks = page.locator(".timeline-chart .event-mark").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    assert set(marks) == first | second
    # The filter: only the newest review's own events, then the whole graph again.
    only = page.get_by_role("switch", name="Only this review's changes")
    expect(only).to_have_attribute("aria-checked", "false")
    only.click()
    expect(only).to_have_attribute("aria-checked", "true")
    expect(page.locator("#panel-timeline .event")).to_have_count(len(second))
    assert _shown(page) == second
    shown_marks = page.locator(".timeline-chart .event-mark").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    assert set(shown_marks) == second
    only.click()
    expect(page.locator("#panel-timeline .event")).to_have_count(len(first | second))
    # The older result's page shows the graph as it was then: the first review's events.
    page.goto(f"/#/graph/{older['result_id']}?grain=events")
    _ready(page)
    expect(page.locator("#graph-scope")).to_contain_text("1 review merged")
    expect(page.locator("#panel-timeline .event")).to_have_count(len(first))
    assert _shown(page) == first
    # As published is a snapshot of one result: it turns the filter on.
    page.goto("/#/graph?grain=events")
    _ready(page)
    page.get_by_role("switch", name="As published").click()
    expect(only).to_have_attribute("aria-checked", "true")
    expect(page.locator("#panel-timeline .event")).to_have_count(len(second))


@pytest.mark.parametrize(
    ("phone", "dark"),
    [(False, False), (True, False), (False, True)],
    ids=["desktop", "375px", "dark"],
)
def test_the_timeline_with_a_selection_and_a_window_passes_axe(
    page: Page, phone: bool, dark: bool
) -> None:
    if phone:
        page.set_viewport_size(PHONE)
    if dark:
        page.emulate_media(color_scheme="dark")
    page.goto("/#/graph")
    _ready(page)
    page.locator("#graph-entities .chip").first.click()
    expect(page.locator(".timeline-chart .event-mark.highlight").first).to_be_attached()
    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Window: the visible range").click()
    expect(page.locator(".window-note")).to_contain_text("Window:")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= (PHONE["width"] if phone else 1280), f"the page scrolls sideways: {width}px"
    # The page's own content (the header's controls belong to the app shell).
    assert_accessible(
        page,
        f"the story graph's timeline{' at 375 px' if phone else ''}{' (dark)' if dark else ''}",
        include="main",
    )
