"""The story graph page (SPEC UI-3, UI-5) in a real browser: the timeline chart (a lane
per story line, zoom, a brushed window, a replay cursor), the entity panel and its
highlights, the list view, a person's edits, the continue-discussion draft and the
knowledge-base note.

The tests share one server (one store per module); each edits a different object.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Route, expect

from tests.ui.conftest import PHONE, screenshot


def _graph(page: Page, **params: object) -> dict[str, Any]:
    result_id = page.request.get("/api/results").json()["results"][0]["result_id"]
    graph: dict[str, Any] = page.request.get(
        f"/api/results/{result_id}/graph", params={"limit": 500, "cumulative": "true", **params}
    ).json()
    return graph


def _entity(graph: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in graph["entities"] if e["name"] == name)


EVENTS = "/#/graph?grain=events"
"""The timeline at the grain of single events (the default shows episodes)."""


def _open(page: Page, path: str = EVENTS) -> None:
    page.goto(path)
    expect(page.get_by_role("heading", name="Story graph", level=1)).to_be_visible()
    expect(page.locator('[data-page="graph"][data-findings="shown"]')).to_be_attached()
    expect(page.locator("#panel-timeline .event").first).to_be_visible()


def _chip(page: Page, name: str) -> Any:
    return page.locator("#graph-entities").get_by_role("button", name=name, exact=True)


def _mark_x(page: Page, event_id: str) -> float:
    return float(
        page.locator(f'.event-mark[data-event="{event_id}"]').first.get_attribute("cx") or "nan"
    )


def test_the_page_draws_one_lane_per_story_line_with_a_mark_per_event(page: Page) -> None:
    graph = _graph(page)
    _open(page)
    expect(page.locator("#graph-result")).to_have_value(graph["result"]["result_id"])
    lines = graph["story_lines"]
    assert len(lines) >= 2, "the examples tell several story lines"
    # A lane per story line and one for the findings, each story line's title as its label.
    lanes = page.locator(".timeline-chart .lane")
    expect(lanes).to_have_count(len(lines) + 1)
    for line in lines:
        lane = page.locator(f'.timeline-chart .lane[data-lane="{line["story_line_id"]}"]')
        expect(lane.locator("title")).to_have_text(line["title"])
    timed = [e for e in graph["events"] if e["occurred_at"]]
    expect(page.locator(".timeline-chart .event-mark")).to_have_count(
        sum(len(line["event_ids"]) for line in lines)
    )
    # Marks sit in time order along the axis, each in its story line's lane.
    ordered = sorted(timed, key=lambda e: e["occurred_at"])
    xs = [
        _mark_x(page, e["event_id"]) for e in (ordered[0], ordered[len(ordered) // 2], ordered[-1])
    ]
    assert xs == sorted(xs) and xs[0] < xs[-1], xs
    failed = [e for e in graph["events"] if e["outcome"] == "failed"]
    assert failed, "the examples hold failed commands"
    # A failed event's marks (one in each of its lanes) are ringed: still open or fixed.
    expect(page.locator(".event-mark.outcome-open, .event-mark.outcome-fixed")).to_have_count(
        sum(len(e["story_line_ids"]) for e in failed)
    )
    # The list under the chart holds every event, newest day first.
    expect(page.locator("#panel-timeline .event")).to_have_count(len(graph["events"]))
    days = page.locator("#panel-timeline .day").evaluate_all("els => els.map(el => el.dataset.day)")
    assert days == sorted(days, reverse=True), days


def test_zooming_spreads_the_marks_and_show_all_brings_the_whole_span_back(page: Page) -> None:
    graph = _graph(page)
    _open(page)
    page.get_by_role("button", name="Show all time").click()
    timed = sorted((e for e in graph["events"] if e["occurred_at"]), key=lambda e: e["occurred_at"])
    first, last = timed[0]["event_id"], timed[-1]["event_id"]
    whole = _mark_x(page, last) - _mark_x(page, first)
    ticks = page.locator(".timeline-axis .axis .tick text").all_text_contents()
    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Zoom in").click()
    expect(page.locator(".timeline-axis .axis .tick text").first).not_to_have_text(ticks[0])
    assert _mark_x(page, last) - _mark_x(page, first) > 3.5 * whole
    # Ctrl + the mouse wheel zooms too, around the pointer (a plain wheel scrolls the lanes).
    page.get_by_role("button", name="Show all time").click()
    expect(page.locator(".timeline-axis .axis .tick text")).to_have_text(ticks)
    box = page.locator(".timeline-chart").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.6)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -100)
    page.keyboard.up("Control")
    expect(page.locator(".timeline-axis .axis .tick text").first).not_to_have_text(ticks[0])
    # Down to minutes: enough zooming in shows an axis in minutes.
    for _ in range(12):
        page.get_by_role("button", name="Zoom in").click()
    labels = page.locator(".timeline-axis .axis .tick text").all_text_contents()
    assert any(re.fullmatch(r"\d\d:\d\d|:\d\d", label) for label in labels), labels


def test_a_brushed_window_filters_the_event_list_and_the_list_tab(page: Page) -> None:
    graph = _graph(page)
    _open(page)
    page.get_by_role("button", name="Show all time").click()
    timed = sorted((e for e in graph["events"] if e["occurred_at"]), key=lambda e: e["occurred_at"])
    # Brushed from just before the first event's mark to just after the last one before
    # the widest gap between marks: the events after the gap fall outside.
    xs = [_mark_x(page, e["event_id"]) for e in timed]
    gap = max(range(len(xs) - 1), key=lambda i: xs[i + 1] - xs[i])
    first, middle = timed[0], timed[gap]
    chart = page.locator(".timeline-chart").bounding_box()
    band = page.locator(".timeline-axis .brush .overlay").bounding_box()
    assert chart is not None and band is not None
    y = band["y"] + band["height"] / 2
    page.mouse.move(chart["x"] + _mark_x(page, first["event_id"]) - 2, y)
    page.mouse.down()
    page.mouse.move(chart["x"] + _mark_x(page, middle["event_id"]) + 2, y, steps=5)
    page.mouse.up()
    note = page.locator(".window-note")
    expect(note).to_contain_text("Window:")
    start, end = note.locator("time").evaluate_all(
        "els => els.map(el => el.getAttribute('datetime'))"
    )
    inside = [
        e
        for e in graph["events"]
        if e["occurred_at"] and _ms(start) <= _ms(e["occurred_at"]) <= _ms(end)
    ]
    assert 0 < len(inside) < len(graph["events"]), (start, end)
    expect(page.locator("#event-list-title")).to_have_text(f"Events in the window ({len(inside)})")
    expect(page.locator("#panel-timeline .event")).to_have_count(len(inside))
    shown = page.locator("#panel-timeline .event time").evaluate_all(
        "els => els.map(el => el.getAttribute('datetime'))"
    )
    assert all(_ms(start) <= _ms(when) <= _ms(end) for when in shown)
    page.get_by_role("tab", name="List").click()
    expect(page.locator("#panel-list h3", has_text="Events")).to_have_text(
        f"Events ({len(inside)})"
    )
    page.get_by_role("tab", name="Timeline").click()
    # The window follows the zoom; clearing it brings every event back.
    page.get_by_role("button", name="Clear the window").click()
    expect(page.locator("#panel-timeline .event")).to_have_count(len(graph["events"]))
    expect(page.locator(".timeline-axis .brush .selection")).to_be_hidden()
    # From the keyboard: the visible range as the window.
    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Window: the visible range").press("Enter")
    expect(note).to_contain_text("Window:")


def test_selecting_an_entity_highlights_its_events_in_every_lane(page: Page) -> None:
    graph = _graph(page)
    # The entity whose events run through most story lines.
    lines_of = {
        entity["entity_id"]: {
            line
            for e in graph["events"]
            if entity["entity_id"] in e["entity_ids"]
            for line in e["story_line_ids"]
        }
        for entity in graph["entities"]
    }
    entity = max(graph["entities"], key=lambda e: (len(lines_of[e["entity_id"]]), e["name"]))
    assert len(lines_of[entity["entity_id"]]) >= 2, "an example entity spans two story lines"
    involving = {e["event_id"] for e in graph["events"] if entity["entity_id"] in e["entity_ids"]}
    _open(page)
    chip = _chip(page, entity["name"])
    if not chip.count():
        page.get_by_label("Find an entity").fill(entity["name"])
    chip.click()
    expect(chip).to_have_attribute("aria-pressed", "true")
    marks = page.locator(".timeline-chart .event-mark.highlight")
    in_lanes = sum(len(e["story_line_ids"]) for e in graph["events"] if e["event_id"] in involving)
    expect(marks).to_have_count(in_lanes)
    lanes = marks.evaluate_all("els => [...new Set(els.map(el => el.getAttribute('cy')))]")
    assert len(lanes) == len(lines_of[entity["entity_id"]]), lanes
    expect(page.locator(".timeline-chart .event-mark.dimmed")).to_have_count(
        page.locator(".timeline-chart .event-mark").count() - in_lanes
    )
    expect(page.locator("#panel-timeline .event.highlight")).to_have_count(len(involving))
    expect(page.locator("#selection-note")).to_contain_text(
        f"{len(involving)} of {len(graph['events'])} events involve the selected entity."
    )
    expect(page.locator("#graph-detail h2")).to_have_text(entity["name"])
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "graph-desktop")
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-timeline-examples-events")
    # Pressing it again clears the highlight.
    chip.click()
    expect(marks).to_have_count(0)
    expect(page.locator(".timeline-chart .event-mark.dimmed")).to_have_count(0)


def test_the_entity_panel_groups_by_kind_top_first_and_finds_by_name(page: Page) -> None:
    graph = _graph(page)
    _open(page)
    panel = page.locator("#graph-entities")
    kinds = Counter(e["kind"] for e in graph["entities"])
    headings = panel.locator(".kind-group h3").all_text_contents()
    expected = sorted(kinds.items(), key=lambda item: (-item[1], item[0]))
    assert headings[: len(expected)] == [f"{k.replace('_', ' ')} ({n})" for k, n in expected]
    # The panel folds away and opens again.
    panel.locator("summary").click()
    expect(panel.get_by_label("Find an entity")).to_be_hidden()
    panel.locator("summary").click()
    search = panel.get_by_label("Find an entity")
    search.fill("MIGRATE")
    matching = [e for e in graph["entities"] if "migrate" in e["name"].lower()]
    assert matching
    expect(panel.locator(".chip[data-select-type=entity]")).to_have_count(len(matching))
    search.fill("no entity is called this")
    expect(panel).to_contain_text("No entity or relation matches")
    search.fill("")
    expect(panel.locator(".kind-group h3")).to_have_count(len(headings))


def test_tabs_and_entity_selection_work_from_the_keyboard_alone(page: Page) -> None:
    _open(page)
    timeline_tab = page.get_by_role("tab", name="Timeline")
    list_tab = page.get_by_role("tab", name="List")
    expect(page.get_by_role("tablist")).to_be_visible()
    expect(timeline_tab).to_have_attribute("aria-selected", "true")
    timeline_tab.focus()
    page.keyboard.press("ArrowRight")
    expect(list_tab).to_be_focused()
    expect(list_tab).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-list")).to_be_visible()
    expect(page.locator("#panel-timeline")).to_be_hidden()
    page.keyboard.press("Home")
    expect(timeline_tab).to_be_focused()
    expect(page.locator("#panel-timeline")).to_be_visible()
    # Only the selected tab is in the Tab order; Tab moves into its panel.
    expect(list_tab).to_have_attribute("tabindex", "-1")
    page.keyboard.press("Tab")
    expect(page.locator("#panel-timeline")).to_be_focused()

    chip = _chip(page, "src/jobs/exportLedger.ts")
    chip.focus()
    page.keyboard.press("Enter")
    expect(chip).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#panel-timeline .event.highlight").first).to_be_visible()
    expect(page.locator(".timeline-chart .event-mark.highlight").first).to_be_attached()
    page.keyboard.press(" ")
    expect(chip).to_have_attribute("aria-pressed", "false")
    # Every event is reachable from the keyboard in the list under the chart.
    page.locator("#panel-timeline .event button.linkish").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#graph-detail h2")).to_be_focused()


def test_replay_shows_only_what_was_known_at_the_chosen_moment(page: Page) -> None:
    graph = _graph(page)
    total = len(graph["events"])
    _open(page)
    slider = page.locator("#replay")
    expect(page.locator("#replay-moment")).to_have_text(re.compile("^Now"))
    expect(page.locator("#panel-timeline .event")).to_have_count(total)
    cursor = page.locator(".timeline-chart .replay-cursor")
    expect(cursor).to_have_class(re.compile(r"\bhidden\b"))
    slider.focus()
    page.keyboard.press("Home")
    expect(page.locator("#replay-moment")).to_contain_text("As known at")
    expect(slider).to_be_focused()
    first = min(e["occurred_at"] for e in graph["events"])
    known_first = [e for e in graph["events"] if e["occurred_at"] == first]
    expect(page.locator("#panel-timeline .event")).to_have_count(len(known_first))
    # The cursor stands on the first events' marks; later marks fade.
    expect(cursor).not_to_have_class(re.compile(r"\bhidden\b"))
    at_first = _mark_x(page, known_first[0]["event_id"])
    assert abs(float(cursor.get_attribute("x1") or "nan") - at_first) < 0.5
    expect(page.locator(".timeline-chart .event-mark.future")).to_have_count(
        page.locator(".timeline-chart .event-mark").count()
        - sum(len(e["story_line_ids"]) for e in known_first)
    )
    expect(page.locator(".graph-summary")).to_contain_text(f"{len(known_first)} of {total} events")
    page.keyboard.press("ArrowRight")
    expect(page.locator(".graph-summary")).not_to_contain_text(
        f"{len(known_first)} of {total} events"
    )
    assert float(cursor.get_attribute("x1") or "nan") > at_first
    # Halfway: every event shown happened at or before the moment shown, and some did not yet.
    half = int(slider.get_attribute("max") or "0") // 2
    slider.fill(str(half))
    moment = page.locator("#replay-moment time").get_attribute("datetime")
    assert moment is not None
    shown = page.locator("#panel-timeline .event time").evaluate_all(
        "els => els.map(el => el.getAttribute('datetime'))"
    )
    assert 0 < len(shown) < total
    assert all(_ms(when) <= _ms(moment) for when in shown), (moment, shown)
    assert len(shown) == sum(1 for e in graph["events"] if _ms(e["occurred_at"]) <= _ms(moment))
    # The list view shows the same moment.
    page.get_by_role("tab", name="List").click()
    expect(page.locator("#panel-list h3", has_text="Events")).to_have_text(f"Events ({len(shown)})")
    page.get_by_role("button", name="Back to now").click()
    expect(page.locator("#panel-list h3", has_text="Events")).to_have_text(f"Events ({total})")
    expect(slider).to_be_focused()
    expect(page.locator(".replay")).to_contain_text(
        "filters this result's facts by their recorded times"
    )
    expect(cursor).to_have_class(re.compile(r"\bhidden\b"))


def _ms(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_the_list_reaches_every_object_and_its_source_previews(page: Page) -> None:
    graph = _graph(page)
    _open(page)
    page.get_by_role("tab", name="List").click()
    panel = page.locator("#panel-list")
    expect(
        panel.get_by_role("heading", name=f"Entities ({len(graph['entities'])})")
    ).to_be_visible()
    expect(panel.locator("[data-open-type=entity]")).to_have_count(len(graph["entities"]))
    expect(panel.locator("[data-open-type=event]")).to_have_count(len(graph["events"]))
    expect(panel.locator("[data-open-type=relation]")).to_have_count(len(graph["relations"]))
    panel.get_by_role("button", name="src/jobs/exportLedger.ts", exact=True).click()
    detail = page.locator("#graph-detail")
    expect(detail.locator("h2")).to_have_text("src/jobs/exportLedger.ts")
    expect(detail.locator("h2")).to_be_focused()
    entity = _entity(graph, "src/jobs/exportLedger.ts")
    expect(detail.get_by_role("heading", name=re.compile(r"^Sources \(\d+"))).to_be_visible()
    sources = detail.locator(".source")
    expect(sources).to_have_count(min(entity["source_count"], 10))
    first = sources.first
    expect(first.locator("pre.excerpt")).not_to_be_empty()
    expect(first.get_by_role("link", name=re.compile("^In “"))).to_have_attribute(
        "href", re.compile(r"^#/conversations/.+\?source=")
    )
    first.get_by_role("button", name="Show context").click()
    expect(first.locator(".context-list li.focus")).to_have_count(1)
    expect(first.locator(".context-list li")).to_have_count(3)
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "graph-list-desktop")
    # Open items carry their cited sources in the list itself.
    item = graph["open_items"][0]
    row = panel.locator("tr", has_text=item["title"])
    row.get_by_text(re.compile(r"^Sources \(\d+\)$")).click()
    expect(row.locator("pre.excerpt").first).to_be_visible()
    # An event opens with its time and outcome.
    event = graph["events"][-1]
    panel.locator(f'[data-open-id="{event["event_id"]}"]').click()
    expect(detail.locator("h2")).to_have_text(event["title"])
    expect(detail).to_contain_text("Outcome")


def test_confirm_revise_and_remove_are_reflected_at_once(page: Page) -> None:
    graph = _graph(page)
    _open(page)
    _chip(page, "pytest").click()
    detail = page.locator("#graph-detail")
    expect(detail.locator("h2")).to_have_text("pytest")
    detail.get_by_role("button", name="Confirm").click()
    expect(detail.locator(".state-badge")).to_have_text("confirmed")
    expect(_chip(page, "pytest")).to_have_class(re.compile(r"\bstate-confirmed\b"))
    expect(detail.get_by_role("button", name="Confirm")).to_have_count(0)

    detail.get_by_role("button", name="Revise").click()
    name = detail.get_by_label("Name")
    expect(name).to_be_focused()
    name.fill("pytest suite")
    detail.get_by_role("button", name="Save revision").click()
    expect(detail.locator("h2")).to_have_text("pytest suite")
    expect(detail.locator(".state-badge")).to_have_text("revised")
    expect(_chip(page, "pytest suite")).to_be_visible()
    expect(detail.locator(".edits li")).to_have_count(2)

    # As published: the snapshot, without the person's later edits.
    switch = page.get_by_role("switch", name="As published")
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(page.locator(".graph-summary .notice")).to_contain_text("As published")
    expect(_chip(page, "pytest")).to_be_visible()
    switch.click()
    expect(_chip(page, "pytest suite")).to_be_visible()

    relation = graph["relations"][0]
    page.locator(f'#graph-entities [data-select-id="{relation["relation_id"]}"]').click()
    expect(detail.locator("h2")).to_have_text(f"Relation: {relation['type']}")
    cited = {(s["source_type"], s["source_id"]) for s in relation["sources"]}
    ends = {relation["from_entity_id"], relation["to_entity_id"]}
    touched = [
        e
        for e in graph["events"]
        if ends <= set(e["entity_ids"])
        or cited & {(s["source_type"], s["source_id"]) for s in e["sources"]}
    ]
    assert touched
    expect(page.locator("#panel-timeline .event.highlight")).to_have_count(len(touched))
    page.once("dialog", lambda dialog: dialog.accept())
    detail.get_by_role("button", name="Remove").click()
    expect(detail.locator(".state-badge")).to_have_text("revoked")
    expect(detail).to_contain_text("automatic runs leave it alone")
    expect(
        page.locator(f'#graph-entities [data-select-id="{relation["relation_id"]}"]')
    ).to_have_class(re.compile(r"\bstate-revoked\b"))
    stored = page.request.get(f"/api/results/{graph['result']['result_id']}/graph").json()
    assert (
        next(r for r in stored["relations"] if r["relation_id"] == relation["relation_id"])["state"]
        == "revoked"
    )


def test_a_continue_draft_is_previewed_edited_within_the_limit_and_saved(page: Page) -> None:
    _open(page)
    card = page.locator("#graph-continue")
    card.get_by_role("button", name="Prepare draft").click()
    draft = card.get_by_label("Draft")
    expect(draft).to_have_value(re.compile(r"^Continuing from Proctor's review result"))
    counter = card.locator("#draft-count")
    expect(counter).to_have_text(re.compile(r"^[\d,]+ / 12,000 characters$"))
    save = card.get_by_role("button", name="Save prompt file")
    draft.fill("x" * 12_001)
    expect(counter).to_have_text("12,001 / 12,000 characters — too long to save")
    expect(save).to_be_disabled()
    draft.fill("Continuing from the review.\n\nMy message: why does the migration fail?")
    expect(counter).to_have_text("69 / 12,000 characters")
    # Leaving with an unsaved edit asks first (dismissed: the page stays).
    page.once("dialog", lambda dialog: dialog.dismiss())
    with page.expect_event("dialog"):  # the question comes after the address changed
        page.get_by_role("link", name="Conversations").click()
    expect(draft).to_be_visible()
    save.click()
    expect(card.locator(".prompt-file code")).to_have_text(re.compile(r"/prompts/continue-.+\.md$"))
    path = card.locator(".prompt-file code").text_content() or ""
    assert Path(path).read_text(encoding="utf-8").strip().endswith("why does the migration fail?")

    # About one entity: the draft names its focus.
    _chip(page, "npm run db:migrate").click()
    page.locator("#graph-detail").get_by_role("button", name="Continue discussion about it").click()
    expect(card).to_contain_text("About the entity “npm run db:migrate”")
    expect(draft).to_have_value(re.compile(r"focus: entity"))


def test_a_knowledge_base_note_is_shown_exactly_before_it_is_written(page: Page) -> None:
    _open(page)
    _chip(page, "python -m invoice.cli export --month 2026-01").click()
    detail = page.locator("#graph-detail")
    detail.get_by_role("button", name="Preview knowledge-base note").click()
    preview = detail.get_by_label("Knowledge-base note text")
    expect(preview).to_contain_text("# python -m invoice.cli export --month 2026-01")
    expect(detail).to_contain_text("This will create the entry")
    text = preview.text_content() or ""
    detail.get_by_role("button", name="Write this note").click()
    written = detail.locator(".kb-written code")
    expect(written).to_have_text(re.compile(r"\.md$"))
    path = written.text_content() or ""
    assert Path(path).read_text(encoding="utf-8") == text
    # A second preview extends the entry instead.
    detail.get_by_role("button", name="Preview knowledge-base note").click()
    expect(detail).to_contain_text("This will append to the entry")


def test_a_late_answer_for_a_result_switched_away_from_is_never_shown(page: Page) -> None:
    graph = _graph(page)
    result_id = graph["result"]["result_id"]
    held: list[Route] = []
    page.route(f"**/api/results/{result_id}/graph*", lambda route: held.append(route))
    with page.expect_request(lambda request: f"/results/{result_id}/graph" in request.url):
        page.goto(f"/#/graph/{result_id}")
    # Switch to the same result by its prefix while the first answer is still pending.
    page.evaluate(f"() => {{ location.hash = '#/graph/{result_id[:8]}'; }}")
    expect(page.locator("#panel-timeline .event").first).to_be_attached()
    assert len(held) == 1
    stale = {**graph, "result": {**graph["result"], "summary": "STALE ANSWER"}}
    with page.expect_event("requestfinished"):
        held[0].fulfill(status=200, content_type="application/json", body=json.dumps(stale))
    page.unroute(f"**/api/results/{result_id}/graph*")
    # One more round trip through the page, then the stale answer must not have landed.
    page.get_by_role("switch", name="As published").click()
    expect(page.locator(".graph-summary .notice")).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("STALE ANSWER")


def test_hostile_names_render_as_inert_text_on_the_graph_page(page: Page) -> None:
    _open(page)
    page.get_by_role("tab", name="List").click()
    # The timeline's axis and lanes are the page's only SVGs; names inside are text too.
    expect(page.locator("main svg")).to_have_count(2)
    expect(page.locator("main svg.timeline-chart, main svg.timeline-axis")).to_have_count(2)
    for selector in ("main script", "main img", "main iframe", "main b", "main foreignObject"):
        assert page.locator(selector).count() == 0, selector
    assert page.evaluate("() => window.__pwned") is None


def test_the_graph_page_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    _open(page)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    _chip(page, "npm run db:migrate").click()
    expect(page.locator("#panel-timeline .event.highlight").first).to_be_visible()
    chart = page.locator(".timeline-chart")
    box = chart.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"], box
    expect(page.locator(".timeline-chart .event-mark.highlight").first).to_be_attached()
    # The details sit below the timeline here: one button takes you there.
    page.get_by_role("button", name="Go to its details").click()
    expect(page.locator("#graph-detail h2")).to_have_text("npm run db:migrate")
    expect(page.locator("#graph-detail h2")).to_be_focused()
    expect(page.locator("#graph-detail h2")).to_be_in_viewport()
    page.locator("#panel-timeline .event.highlight").first.locator("button.linkish").click()
    expect(page.locator("#graph-detail h2")).to_have_text("npm run db:migrate failed (exit 1)")
    expect(page.locator("#graph-detail h2")).to_be_in_viewport()
    page.get_by_role("tab", name="List").click()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the list scrolls sideways: {width}px"
    page.get_by_role("tab", name="Timeline").click()
    page.evaluate("() => document.querySelector('.tabs').scrollIntoView()")
    screenshot(page, "graph-375")


def test_a_link_naming_an_object_opens_it_with_its_events_highlighted(page: Page) -> None:
    graph = _graph(page)
    entity = _entity(graph, "npm run db:migrate")
    involving = [e for e in graph["events"] if entity["entity_id"] in e["entity_ids"]]
    _open(page, f"/#/graph?grain=events&select=entity:{entity['entity_id']}")
    expect(page.locator("#graph-detail h2")).to_have_text("npm run db:migrate")
    expect(page.locator("#panel-timeline .event.highlight")).to_have_count(len(involving))


def test_findings_sit_in_their_lane_at_their_evidence_time_and_open_in_the_trace(
    page: Page,
) -> None:
    graph = _graph(page)
    result_id = graph["result"]["result_id"]
    findings = page.request.get(
        f"/api/results/{result_id}/findings", params={"cumulative": "true"}
    ).json()["findings"]
    timed = [f for f in findings if f["at"]]
    assert timed, "the examples' rules find things in the reviewed conversations"
    _open(page)
    marks = page.locator(".timeline-chart .finding-mark")
    expect(marks).to_have_count(len(timed))
    expect(page.locator('.timeline-chart .lane[data-lane="findings"] title')).to_have_text(
        f"Findings ({len(findings)})"
    )
    # A finding sits where an event at the same moment would: left of later ones.
    earliest = min(timed, key=lambda f: f["at"])
    latest = max(timed, key=lambda f: f["at"])
    assert earliest["at"] < latest["at"], "the examples' findings are months apart"
    placed = marks.evaluate_all(
        "els => els.map(el => [el.dataset.finding, el.getAttribute('transform')])"
    )
    x = {key: float(re.findall(r"[-\d.]+", where)[0]) for key, where in placed}
    assert x[earliest["finding_id"]] < x[latest["finding_id"]], x
    # (Marks of findings minutes apart overlap at this zoom: the click goes to the mark.)
    page.locator(f'.finding-mark[data-finding="{latest["finding_id"]}"]').dispatch_event("click")
    expect(page).to_have_url(re.compile(rf"#/conversations/.+\?finding={latest['finding_id']}$"))
