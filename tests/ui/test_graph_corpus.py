"""The story graph's timeline over the whole ``../shared/transcripts`` corpus (real Claude
Code, Codex, Gemini CLI and OpenTelemetry sessions), imported, checked and reviewed as a
user would: by default tens of episodes (not hundreds of single events) with readable
titles — sanitised Codex requests are placeholders, titled by their work — in the
busiest stretch of time; every story line gets a lane and every timed event a mark at
the grain of single events; the page stays within a phone's width. The screenshots for
the docs come from here."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from proctor.supervision import check_conversations
from tests.ui.conftest import PHONE, screenshot
from tests.ui.graph_episodes import episodes_of
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


PLACEHOLDER = re.compile(r"REDACTED_|len=\d+ sha=")


def _ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


HOUR = 3_600_000


def _marks(page: Page) -> tuple[list[str], list[str]]:
    """The events drawn as marks, and the events of each folded run."""
    marks: list[str] = page.locator(".timeline-chart .event-mark").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    runs: list[str] = page.locator(".timeline-chart .run-mark").evaluate_all(
        "els => els.map(el => el.dataset.events)"
    )
    return marks, runs


def _visible(page: Page) -> tuple[float, float]:
    host = page.locator(".chart-host")
    return (
        float(host.get_attribute("data-visible-from") or "nan"),
        float(host.get_attribute("data-visible-to") or "nan"),
    )


def _assert_opens_on_the_busiest_stretch(page: Page, at: dict[str, float]) -> None:
    """The visible range is the narrowest stretch holding two thirds of the marks (as the
    data says, worked out here), padded a little, and well under the whole span."""
    marks, runs = _marks(page)
    times = sorted([at[m] for m in marks] + [min(at[i] for i in run.split()) for run in runs])
    need = -(-len(times) * 2 // 3)
    start = min(range(len(times) - need + 1), key=lambda i: times[i + need - 1] - times[i])
    busiest = (times[start], times[start + need - 1])
    shown = _visible(page)
    assert shown[0] <= busiest[0] and shown[1] >= busiest[1], (shown, busiest)
    assert shown[1] - shown[0] <= (busiest[1] - busiest[0]) * 1.25 + HOUR, (shown, busiest)
    assert (shown[1] - shown[0]) * 3 < max(at.values()) - min(at.values()), shown


def test_the_corpus_opens_on_readable_episodes_in_its_busiest_stretch(page: Page) -> None:
    graph = _graph(page)
    at = {e["event_id"]: _ms(e["occurred_at"]) for e in graph["events"] if e["occurred_at"]}
    page.goto("/#/graph")
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    marks, runs = _marks(page)
    episodes = [e for e in graph["events"] if e["kind"] == "episode" and e["occurred_at"]]
    # Tens of marks: the episodes, sub-agents' runs folded, the few events of no episode.
    assert {e["event_id"] for e in episodes} <= set(marks)
    assert len(marks) + len(runs) < len(at) / 4, (len(marks), len(runs), len(at))
    # No title shows a redaction placeholder; redacted requests are named by their work.
    titles = page.locator(".timeline-chart title").all_text_contents()
    rows = page.locator("#panel-timeline .event button.linkish").all_text_contents()
    assert not [t for t in titles + rows if PLACEHOLDER.search(t)]
    assert any(t.startswith("Request (redacted) → ") for t in titles)
    # The opening zoom: the busiest stretch, not the whole (months-wide) span.
    _assert_opens_on_the_busiest_stretch(page, at)
    shown = _visible(page)
    expect(page.locator("#zoom-note")).to_contain_text("Show all time")
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus")
    # One click on an episode in view opens its events in a lane under it.
    lanes_before = page.locator(".timeline-chart .lane").count()
    work = {k: members for k, (_, members) in episodes_of(graph).items()}
    opened = max(
        (e for e in episodes if shown[0] < at[e["event_id"]] < shown[1]),
        key=lambda e: len(work.get(e["event_id"], [])),
    )
    page.locator(f'.timeline-chart .episode-mark[data-event="{opened["event_id"]}"]').click()
    expect(page.locator(".timeline-chart .lane")).to_have_count(lanes_before + 1)
    expect(page.locator("#graph-detail h2")).to_have_text(opened["title"])
    # Its stretch brushed and zoomed to (the request to its last work): its events spread.
    chart = page.locator(".timeline-chart").bounding_box()
    band = page.locator(".timeline-axis .brush .overlay").bounding_box()
    assert chart is not None and band is not None
    xs = [
        float(page.locator(f'.event-mark[data-event="{i}"]').first.get_attribute("cx") or "nan")
        for i in [opened["event_id"], *work.get(opened["event_id"], [])]
        if i in at
    ]
    page.mouse.move(chart["x"] + min(xs) - 3, band["y"] + band["height"] / 2)
    page.mouse.down()
    page.mouse.move(chart["x"] + max(xs) + 3, band["y"] + band["height"] / 2, steps=5)
    page.mouse.up()
    page.get_by_role("button", name="Zoom to the window").click()
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus-episode")
    # The brush selected a window in the zoomed view: the list follows it.
    expect(page.locator(".window-note")).to_contain_text("Window:")
    in_window = page.locator("#event-list-title").text_content() or ""
    assert in_window.startswith("Episodes and other events in the window"), in_window
    # "Show all time" widens the axis to every event.
    page.get_by_role("button", name="Show all time").click()
    expect(page.locator("#zoom-note")).to_have_text("Showing all time.")
    start, end = _visible(page)
    assert start <= min(at.values()) and end >= max(at.values()), (start, end)


def test_every_story_line_of_the_corpus_has_a_lane_with_its_events(page: Page) -> None:
    graph = _graph(page)
    assert len(graph["story_lines"]) >= 10, "the corpus tells many story lines"
    page.goto("/#/graph?grain=events")
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
    screenshot(page, "graph-timeline-corpus-events")
    # The busiest day's events brushed and zoomed to, an entity selected.
    page.get_by_role("button", name="Show all time").click()
    ordered = sorted(
        (e for e in graph["events"] if e["occurred_at"]), key=lambda e: e["occurred_at"]
    )
    days = Counter(e["occurred_at"][:10] for e in ordered)
    busiest = [e for e in ordered if e["occurred_at"].startswith(max(days, key=days.__getitem__))]
    chart = page.locator(".timeline-chart").bounding_box()
    band = page.locator(".timeline-axis .brush .overlay").bounding_box()
    assert chart is not None and band is not None

    def x(event: dict[str, Any]) -> float:
        mark = page.locator(f'.event-mark[data-event="{event["event_id"]}"]').first
        return chart["x"] + float(mark.get_attribute("cx") or "nan")

    y = band["y"] + band["height"] / 2
    page.mouse.move(x(busiest[0]) - 2, y)
    page.mouse.down()
    page.mouse.move(x(busiest[-1]) + 2, y, steps=5)
    page.mouse.up()
    expect(page.locator(".window-note")).to_contain_text("Window:")
    page.get_by_role("button", name="Zoom to the window").click()
    page.locator("#graph-entities .chip").first.click()
    expect(page.locator(".timeline-chart .event-mark.highlight").first).to_be_attached()
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus-zoomed")


def test_the_corpus_timeline_fits_a_phone(page: Page) -> None:
    graph = _graph(page)
    at = {e["event_id"]: _ms(e["occurred_at"]) for e in graph["events"] if e["occurred_at"]}
    page.set_viewport_size(PHONE)
    page.goto("/#/graph")
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    # The same opening range on a narrow axis (a few pixels of the whole span).
    _assert_opens_on_the_busiest_stretch(page, at)
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-corpus-375")
