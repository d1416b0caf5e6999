"""The story graph's timeline at the grain of episodes (issue 20), in a real browser.

By default a conversation's lane shows its episodes (a user's request and the work it
caused, with its outcome line), not every read and command; one click on an episode opens
its single events in place — in the chart (its own lane under the conversation's) and in
the list under it — and a switch shows every single event. A link to one event opens the
episode that holds it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.ui.conftest import screenshot
from tests.ui.graph_episodes import episodes_of


@pytest.fixture(scope="module")
def server(read_only_server: str) -> str:
    """Its tests only read: the shared server (``tests/ui/conftest.py``)."""
    return read_only_server


def _graph(page: Page) -> dict[str, Any]:
    result_id = page.request.get("/api/results").json()["results"][0]["result_id"]
    graph: dict[str, Any] = page.request.get(
        f"/api/results/{result_id}/graph", params={"limit": 500, "cumulative": "true"}
    ).json()
    return graph


def _marks(page: Page) -> list[str]:
    found: list[str] = page.locator(".timeline-chart .event-mark").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    return found


def _ready(page: Page, path: str = "/#/graph") -> None:
    page.goto(path)
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    expect(page.locator("#panel-timeline .event").first).to_be_visible()


def test_the_default_timeline_shows_episodes_and_one_click_opens_an_episode_s_events(
    page: Page,
) -> None:
    graph = _graph(page)
    episodes = episodes_of(graph)
    work = {i for _, members in episodes.values() for i in members}
    assert len(episodes) >= 3 and len(work) > len(episodes), "the examples tell episodes"
    _ready(page)
    grain = page.get_by_role("switch", name="Every single event")
    expect(grain).to_have_attribute("aria-checked", "false")
    marks = _marks(page)
    # Every episode has a mark; none of their work has one until the episode is opened.
    assert set(episodes) <= set(marks)
    assert not work & set(marks), "an episode's work is drawn before it is opened"
    assert len(marks) < len(graph["events"])
    rows = page.locator("#panel-timeline .event").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    assert set(episodes) <= set(rows) and not work & set(rows)
    # An episode's row carries its outcome line.
    episode_id, (line_id, members) = max(episodes.items(), key=lambda item: len(item[1][1]))
    episode = next(e for e in graph["events"] if e["event_id"] == episode_id)
    row = page.locator(f'#panel-timeline .event.episode[data-event="{episode_id}"]')
    expect(row.locator(".episode-outcome")).to_contain_text(episode["summary"])
    # One click on its mark opens its work: a lane of its own, and its rows in the list.
    page.locator(f'.timeline-chart .episode-mark[data-event="{episode_id}"]').dispatch_event(
        "click"
    )
    expect(page.locator(f'.timeline-chart .lane[data-lane="{line_id}"]')).to_have_count(1)
    timed = {e["event_id"] for e in graph["events"] if e["occurred_at"]}
    lane_marks = page.locator(f'.timeline-chart .event-mark[data-event="{members[0]}"]')
    expect(lane_marks).to_have_count(1 if members[0] in timed else 0)
    assert {m for m in members if m in timed} <= set(_marks(page))
    toggle = row.locator(".episode-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(row.locator(".episode-work .event")).to_have_count(len(members))
    expect(page.locator("#graph-detail h2")).to_have_text(episode["title"])
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-examples")
    # The list's button folds it again (and opens it: the keyboard's way).
    toggle.click()
    expect(row.locator(".episode-work")).to_have_count(0)
    expect(page.locator(f'.timeline-chart .lane[data-lane="{line_id}"]')).to_have_count(0)
    assert not work & set(_marks(page))
    row.locator(".episode-toggle").press("Enter")
    expect(row.locator(".episode-work .event")).to_have_count(len(members))
    expect(row.locator(".episode-toggle")).to_be_focused()
    # The switch shows every single event, in every story line's lane.
    grain.click()
    expect(grain).to_have_attribute("aria-checked", "true")
    expect(page.locator(".timeline-chart .event-mark")).to_have_count(
        sum(1 for line in graph["story_lines"] for i in line["event_ids"] if i in timed)
    )
    expect(page.locator("#panel-timeline .event")).to_have_count(len(graph["events"]))


def test_a_link_to_one_event_of_an_episode_opens_that_episode(page: Page) -> None:
    graph = _graph(page)
    episode_id, (_, members) = next((k, v) for k, v in episodes_of(graph).items() if len(v[1]) >= 2)
    member = members[-1]
    _ready(page, f"/#/graph?select=event:{member}")
    row = page.locator(f'#panel-timeline .event.episode[data-event="{episode_id}"]')
    expect(row.locator(".episode-toggle")).to_have_attribute("aria-expanded", "true")
    expect(row.locator(f'.episode-work .event[data-event="{member}"]')).to_have_class(
        re.compile(r"\bhighlight\b")
    )
    expect(page.locator(f'.timeline-chart .event-mark[data-event="{member}"]')).to_have_count(1)
    title = next(e["title"] for e in graph["events"] if e["event_id"] == member)
    expect(page.locator("#graph-detail h2")).to_have_text(title)


def test_selecting_an_entity_marks_the_episodes_whose_work_touched_it(page: Page) -> None:
    graph = _graph(page)
    episodes = episodes_of(graph)
    by_id = {e["event_id"]: e for e in graph["events"]}
    # An entity only the work touches (a file read, a command): the episode names it too.
    entity = next(
        e
        for e in graph["entities"]
        if any(
            e["entity_id"] in by_id[m]["entity_ids"]
            for _, members in episodes.values()
            for m in members
        )
    )
    holding = {
        episode_id
        for episode_id, (_, members) in episodes.items()
        if any(entity["entity_id"] in by_id[m]["entity_ids"] for m in members)
    }
    _ready(page)
    chip = page.locator(f'#graph-entities [data-select-id="{entity["entity_id"]}"]')
    if not chip.count():
        page.get_by_label("Find an entity").fill(entity["name"])
    chip.click()
    highlighted = page.locator(".timeline-chart .event-mark.highlight").evaluate_all(
        "els => els.map(el => el.dataset.event)"
    )
    assert holding <= set(highlighted), (holding, highlighted)


def test_a_sub_agent_run_is_one_folded_mark_and_row_until_it_is_opened(page: Page) -> None:
    graph = _graph(page)
    kinds = {e["event_id"]: e["kind"] for e in graph["events"]}
    runs = [
        line
        for line in graph["story_lines"]
        if line["parent_id"] and not any(kinds.get(i) == "episode" for i in line["event_ids"])
    ]
    assert runs, "the example session runs a sub-agent"
    run = runs[0]
    events = [i for i in run["event_ids"] if i in kinds]
    _ready(page)
    expect(
        page.locator(f'.timeline-chart .run-mark[data-line="{run["story_line_id"]}"]')
    ).to_have_count(1)
    assert not set(events) & set(_marks(page))
    row = page.locator(f'#panel-timeline .event.run[data-run="{run["story_line_id"]}"]')
    expect(row).to_contain_text(run["title"])
    for event_id in events:
        expect(page.locator(f'#panel-timeline .event[data-event="{event_id}"]')).to_have_count(0)
    row.get_by_role("button", name=f"Show its {len(events)} event").click()
    for event_id in events:
        expect(page.locator(f'#panel-timeline .event[data-event="{event_id}"]')).to_have_count(1)
    assert set(events) <= set(_marks(page))
    expect(page.locator(".timeline-chart .run-mark")).to_have_count(len(runs) - 1)
