"""The story graph's timeline over the whole ``../shared/transcripts`` corpus (real Claude
Code, Codex, Gemini CLI and OpenTelemetry sessions), imported, checked and reviewed as a
user would: every story line gets a lane, every timed event a mark in it, and the page
stays within a phone's width. The screenshots for the docs come from here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from proctor.supervision import check_conversations
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import serve_copy

pytestmark = [pytest.mark.shared, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(transcripts_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("corpus") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [transcripts_dir])
        rows = store.list_conversations(include_children=True, limit=100_000)
        check_conversations(
            store,
            [r.conversation_id for r in rows if r.conversation.parent_conversation_id is None],
        )
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    with serve_copy(path, tmp_path_factory.mktemp("corpus-home")) as served:
        yield served.url


def _graph(page: Page) -> dict[str, Any]:
    result_id = page.request.get("/api/results").json()["results"][0]["result_id"]
    graph: dict[str, Any] = page.request.get(
        f"/api/results/{result_id}/graph", params={"limit": 500, "cumulative": "true"}
    ).json()
    return graph


def test_every_story_line_of_the_corpus_has_a_lane_with_its_events(page: Page) -> None:
    graph = _graph(page)
    assert len(graph["story_lines"]) >= 10, "the corpus tells many story lines"
    page.goto("/#/graph")
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    timed = {e["event_id"] for e in graph["events"] if e["occurred_at"]}
    in_lines = sum(
        1 for line in graph["story_lines"] for event_id in line["event_ids"] if event_id in timed
    )
    expect(page.locator(".timeline-chart .lane:not(.findings-lane)")).to_have_count(
        len(graph["story_lines"])
    )
    expect(page.locator(".timeline-chart .event-mark")).to_have_count(in_lines)
    # The findings about these conversations sit in their lane (at their evidence time).
    findings = page.request.get(
        f"/api/results/{graph['result']['result_id']}/findings", params={"cumulative": "true"}
    ).json()["findings"]
    expect(page.locator(".timeline-chart .finding-mark")).to_have_count(
        sum(1 for f in findings if f["at"])
    )
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus")
    # The newest half of the events brushed and zoomed to, an entity selected.
    ordered = sorted(
        (e for e in graph["events"] if e["occurred_at"]), key=lambda e: e["occurred_at"]
    )
    chart = page.locator(".timeline-chart").bounding_box()
    band = page.locator(".timeline-axis .brush .overlay").bounding_box()
    assert chart is not None and band is not None

    def x(event: dict[str, Any]) -> float:
        mark = page.locator(f'.event-mark[data-event="{event["event_id"]}"]').first
        return chart["x"] + float(mark.get_attribute("cx") or "nan")

    y = band["y"] + band["height"] / 2
    page.mouse.move(x(ordered[len(ordered) // 2]) - 2, y)
    page.mouse.down()
    page.mouse.move(x(ordered[-1]) + 2, y, steps=5)
    page.mouse.up()
    page.get_by_role("button", name="Zoom to the window").click()
    page.locator("#graph-entities .chip").first.click()
    expect(page.locator(".timeline-chart .event-mark.highlight").first).to_be_attached()
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus-zoomed")


def test_the_corpus_timeline_fits_a_phone(page: Page) -> None:
    page.set_viewport_size(PHONE)
    page.goto("/#/graph")
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus-375")
