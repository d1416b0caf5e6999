"""The story graph page (SPEC UI-3, UI-5) in a real browser: the timeline by day with
same-day clusters, entity selection, replay, the list view, a person's edits, the
continue-discussion draft and the knowledge-base note.

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


def _graph(page: Page) -> dict[str, Any]:
    result_id = page.request.get("/api/results").json()["results"][0]["result_id"]
    graph: dict[str, Any] = page.request.get(
        f"/api/results/{result_id}/graph", params={"limit": 500}
    ).json()
    return graph


def _entity(graph: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in graph["entities"] if e["name"] == name)


def _open(page: Page, path: str = "/#/graph") -> None:
    page.goto(path)
    expect(page.get_by_role("heading", name="Story graph", level=1)).to_be_visible()
    expect(page.locator("#panel-timeline .day").first).to_be_visible()


def _chip(page: Page, name: str) -> Any:
    return page.locator(".chip-groups").get_by_role("button", name=name, exact=True)


def test_the_page_opens_the_latest_result_as_a_timeline_of_days_with_clusters(
    page: Page,
) -> None:
    graph = _graph(page)
    _open(page)
    expect(page.locator("#graph-result")).to_have_value(graph["result"]["result_id"])
    per_day = Counter(e["occurred_at"][:10] for e in graph["events"])
    days = sorted(per_day)
    expect(page.locator("#panel-timeline .day")).to_have_count(len(days))
    clusters = page.locator("#panel-timeline .day.cluster")
    expect(clusters).to_have_count(sum(1 for count in per_day.values() if count > 1))
    assert per_day[days[0]] > 1 and per_day[days[-1]] > 1, per_day
    oldest, newest = clusters.first, clusters.last
    expect(oldest).to_have_attribute("data-day", days[0])
    # The newest day starts open; an older day is one collapsed cluster that expands.
    expect(newest.locator(".cluster-toggle")).to_have_attribute("aria-expanded", "true")
    expect(oldest.locator(".cluster-toggle")).to_have_attribute("aria-expanded", "false")
    expect(oldest.locator(".event").first).to_be_hidden()
    on_oldest = per_day[days[0]]
    expect(oldest.locator(".cluster-toggle")).to_have_text(f"{on_oldest} events")
    oldest.locator(".cluster-toggle").click()
    expect(oldest.locator(".event")).to_have_count(on_oldest)
    expect(oldest.locator(".event").first).to_be_visible()
    expect(page.locator("#panel-timeline .event")).to_have_count(len(graph["events"]))
    oldest.locator(".cluster-toggle").click()
    expect(oldest.locator(".event").first).to_be_hidden()


def test_selecting_an_entity_highlights_exactly_the_events_that_involve_it(page: Page) -> None:
    graph = _graph(page)
    entity = _entity(graph, "npm run db:migrate")
    involving = [e for e in graph["events"] if entity["entity_id"] in e["entity_ids"]]
    assert involving, "the examples run npm run db:migrate"
    _open(page)
    chip = _chip(page, "npm run db:migrate")
    chip.click()
    expect(chip).to_have_attribute("aria-pressed", "true")
    highlighted = page.locator("#panel-timeline .event.highlight")
    expect(highlighted).to_have_count(len(involving))
    for event in involving:
        expect(
            page.locator(f'#panel-timeline .event[data-event="{event["event_id"]}"]')
        ).to_have_class(re.compile(r"\bhighlight\b"))
    expect(page.locator("#panel-timeline .event.dimmed")).to_have_count(
        len(graph["events"]) - len(involving)
    )
    expect(page.locator("#selection-note")).to_contain_text(
        f"{len(involving)} of {len(graph['events'])} events involve the selected entity."
    )
    expect(page.locator("#graph-detail h2")).to_have_text("npm run db:migrate")
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "graph-desktop", full_page=True)
    # Selecting another entity moves the highlight; a collapsed day holding its events opens.
    other = _entity(graph, "invoice/totals.py")
    others = [e for e in graph["events"] if other["entity_id"] in e["entity_ids"]]
    _chip(page, "invoice/totals.py").click()
    expect(chip).to_have_attribute("aria-pressed", "false")
    expect(highlighted).to_have_count(len(others))
    oldest = page.locator("#panel-timeline .day.cluster").first
    expect(oldest.locator(".cluster-toggle")).to_have_attribute("aria-expanded", "true")
    expect(oldest.locator(".badge.match")).to_have_text(f"{len(others)} highlighted")
    # Pressing the selected chip again clears the selection.
    _chip(page, "invoice/totals.py").click()
    expect(highlighted).to_have_count(0)
    expect(page.locator("#panel-timeline .event.dimmed")).to_have_count(0)


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
    page.keyboard.press(" ")
    expect(chip).to_have_attribute("aria-pressed", "false")
    # A collapsed day opens from the keyboard too.
    toggle = page.locator("#panel-timeline .day.cluster").first.locator(".cluster-toggle")
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")


def test_replay_shows_only_what_was_known_at_the_chosen_moment(page: Page) -> None:
    graph = _graph(page)
    total = len(graph["events"])
    _open(page)
    slider = page.locator("#replay")
    expect(page.locator("#replay-moment")).to_have_text(re.compile("^Now"))
    expect(page.locator("#panel-timeline .event")).to_have_count(total)
    slider.focus()
    page.keyboard.press("Home")
    expect(page.locator("#replay-moment")).to_contain_text("As known at")
    expect(slider).to_be_focused()
    first = min(e["occurred_at"] for e in graph["events"])
    known_first = [e for e in graph["events"] if e["occurred_at"] == first]
    expect(page.locator("#panel-timeline .event")).to_have_count(len(known_first))
    expect(page.locator(".graph-summary")).to_contain_text(f"{len(known_first)} of {total} events")
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
    page.locator(f'.chip-groups [data-select-id="{relation["relation_id"]}"]').click()
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
        page.locator(f'.chip-groups [data-select-id="{relation["relation_id"]}"]')
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
    for selector in ("main script", "main img", "main iframe", "main svg", "main b"):
        assert page.locator(selector).count() == 0, selector
    assert page.evaluate("() => window.__pwned") is None


def test_the_graph_page_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    _open(page)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    _chip(page, "npm run db:migrate").click()
    expect(page.locator("#panel-timeline .event.highlight").first).to_be_visible()
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
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "graph-375")
