"""The findings inbox in a real browser (issue 17): a home with 600 findings over 24
conversations, generated transcripts ingested and checked through the library. The inbox
shows the true total and pages through all of it; bulk dismiss of 50 then one undo
restores them; j/k/a/d/x triage from the keyboard; the conversations list sorts by open
findings; a conversation's findings panel pages past 100 and opens on a linked finding."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from proctor.store import open_store
from proctor.store._findings_inbox import FindingFilter
from tests.inbox_world import fill_store
from tests.ui.accessibility import assert_accessible
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import serve_copy

CONVERSATIONS = 24
CALLS = 23
"""Per conversation: 23 destructive calls, one failing loop, one monologue: 25 findings."""
BIG_CALLS = 128
"""The first conversation's destructive calls: 130 findings and more, for the panel's pages."""
BIG = "Maintenance run amber-amber"
COUNTS: dict[str, int] = {}
"""What ``check`` found, counted when the home is seeded: "total", BIG, and each rule."""


@pytest.fixture(scope="module")
def inbox_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inbox-seed")
    path = folder / "proctor.db"
    store = open_store(path)
    try:
        fill_store(
            store,
            folder / "transcripts",
            conversations=CONVERSATIONS,
            calls=CALLS,
            first_calls=BIG_CALLS,
        )
        COUNTS["total"] = store.findings_page(FindingFilter(), limit=1).total
        for group in store.finding_groups(FindingFilter(), by="conversation", limit=100)[0]:
            COUNTS[group.label] = group.count
        for group in store.finding_groups(FindingFilter(), by="rule", limit=100)[0]:
            COUNTS[group.key] = group.count
    finally:
        store.close()
    return path


@pytest.fixture(scope="module")
def server(inbox_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module; tests that change findings undo what they did."""
    with serve_copy(inbox_home, tmp_path_factory.mktemp("inbox-home")) as served:
        yield served.url


def _total() -> int:
    return COUNTS["total"]


def _ready(page: Page, path: str = "/#/findings") -> None:
    page.goto(path)
    expect(page.locator('[data-page="inbox"][data-ready="true"]')).to_be_attached()


def _count(page: Page) -> str:
    return page.locator("#inbox-count").inner_text()


def _rows(page: Page) -> list[str]:
    ids: list[str] = page.locator("tbody tr[data-finding]").evaluate_all(
        "rows => rows.map(r => r.dataset.finding)"
    )
    return ids


def test_the_inbox_shows_the_true_total_and_pages_through_every_finding(page: Page) -> None:
    _ready(page)
    total = _total()
    assert total >= (CONVERSATIONS - 1) * (CALLS + 2) + BIG_CALLS + 2 >= 500
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {total} findings")
    screenshot(page, "inbox-desktop")
    expect(page.get_by_role("link", name="Findings", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    seen: list[str] = []
    for start in range(0, total, 50):
        end = min(start + 50, total)
        expect(page.locator("#inbox-count")).to_have_text(f"{start + 1}–{end} of {total} findings")
        rows = _rows(page)
        assert len(rows) == end - start
        seen += rows
        if start + 50 < total:
            page.get_by_role("navigation", name="Pages of findings").get_by_role(
                "button", name="Next"
            ).click()
    assert len(set(seen)) == total
    # The page is in the address: a reload keeps it, and back goes to the page before.
    last = (total - 1) // 50 * 50
    assert f"offset={last}" in page.url
    page.reload()
    expect(page.locator("#inbox-count")).to_have_text(f"{last + 1}–{total} of {total} findings")
    page.go_back()
    expect(page.locator("#inbox-count")).to_have_text(f"{last - 49}–{last} of {total} findings")


def test_filters_and_groups_narrow_the_list_and_live_in_the_address(page: Page) -> None:
    _ready(page)
    page.locator("#inbox-rule").select_option("repeated_action_error")
    loops = COUNTS["repeated_action_error"]
    assert loops == CONVERSATIONS
    expect(page.locator("#inbox-count")).to_have_text(f"1–{loops} of {loops} findings")
    assert "rule=repeated_action_error" in page.url
    expect(page.locator("#inbox-rule")).to_be_focused()
    page.locator("#inbox-group").select_option("conversation")
    expect(page.locator("#inbox-count")).to_have_text(
        f"{CONVERSATIONS} conversations with matching findings"
    )
    page.get_by_role("link", name=re.compile(BIG)).click()
    expect(page.locator("#inbox-count")).to_have_text("1–1 of 1 findings")
    page.go_back()
    expect(page.locator("#inbox-count")).to_have_text(
        f"{CONVERSATIONS} conversations with matching findings"
    )
    page.locator("#inbox-group").select_option("")
    page.locator("#inbox-rule").select_option("")
    search = page.locator("#inbox-q")
    search.fill("git push --force")
    search.press("Enter")
    # Wait for the searched list itself: the count's pattern also matches the list before.
    found = page.locator("a.finding-title")
    expect(found.first).to_contain_text("git push --force")
    expect(found.filter(has_not_text="git push --force")).to_have_count(0)
    expect(page.locator("#inbox-count")).to_have_text(re.compile(r"^1–50 of \d+ findings$"))
    titles = found.all_inner_texts()
    assert titles and all("git push --force" in t for t in titles)
    page.locator("#inbox-project").select_option("billing")
    expect(page.locator("tbody tr[data-finding]").first).to_contain_text("billing")
    assert all("billing" in row for row in page.locator("tbody tr[data-finding]").all_inner_texts())


def test_bulk_dismiss_of_fifty_findings_then_one_undo_restores_them(page: Page) -> None:
    _ready(page, "/#/findings?sort=created&order=asc")
    first_page = _rows(page)
    page.get_by_label("Select all findings on this page").check()
    expect(page.locator("#inbox-selected")).to_have_text("50 selected")
    page.locator(".inbox-bulk").get_by_role("button", name="Dismiss").click()
    expect(page.locator(".inbox-undo")).to_contain_text("50 findings dismissed.")
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total() - 50} findings")
    assert set(_rows(page)).isdisjoint(first_page)
    page.locator("input.pick-one").nth(0).check()
    assert_accessible(page, "the inbox with a selection and the undo bar")
    page.get_by_role("button", name="Clear selection").click()
    page.get_by_role("button", name="Undo").click()
    expect(page.locator(".inbox-undo")).to_contain_text("Undone: 50 findings restored.")
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total()} findings")
    assert _rows(page) == first_page


def test_shift_click_selects_a_range(page: Page) -> None:
    _ready(page)
    boxes = page.locator("input.pick-one")
    boxes.nth(2).click()
    boxes.nth(7).click(modifiers=["Shift"])
    expect(page.locator("#inbox-selected")).to_have_text("6 selected")
    selected = page.locator("tbody tr[aria-selected='true']").evaluate_all(
        "rows => rows.map(r => Number(r.dataset.index))"
    )
    assert selected == [2, 3, 4, 5, 6, 7]
    page.get_by_role("button", name="Clear selection").click()
    expect(page.locator(".inbox-bulk")).to_be_hidden()


def test_keyboard_triage_moves_with_j_k_and_acknowledges_and_dismisses(page: Page) -> None:
    _ready(page, "/#/findings?sort=created&order=asc")
    rows = _rows(page)
    current = page.locator("tbody tr.current")
    expect(current).to_have_attribute("data-finding", rows[0])
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    expect(current).to_have_attribute("data-finding", rows[1])
    expect(page.locator("#inbox-announce")).to_contain_text(f"Finding 2 of {_total()}")
    page.keyboard.press("a")  # acknowledged: no longer open, the next one becomes current
    expect(page.locator(".inbox-undo")).to_contain_text("1 finding acknowledged.")
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total() - 1} findings")
    expect(current).to_have_attribute("data-finding", rows[2])
    page.keyboard.press("d")
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total() - 2} findings")
    expect(current).to_have_attribute("data-finding", rows[3])
    # One undo: the last change (the dismissal) only.
    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total() - 1} findings")
    page.locator("#inbox-status").select_option("acknowledged")
    expect(page.locator("#inbox-count")).to_have_text("1–1 of 1 findings")
    assert _rows(page) == [rows[1]]
    # Typing in a field is typing, not triage; "/" from the page goes to the search field.
    page.locator("#inbox-status").select_option("open")
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total() - 1} findings")
    page.locator("h1").click()
    page.keyboard.press("/")
    search = page.locator("#inbox-q")
    expect(search).to_be_focused()
    page.keyboard.type("dajk")
    expect(search).to_have_value("dajk")
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {_total() - 1} findings")
    # x selects the current finding; Enter opens it in its conversation.
    page.locator("h1").click()
    page.keyboard.press("x")
    expect(page.locator("#inbox-selected")).to_have_text("1 selected")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#/conversations/.+\?finding="))
    # Reopen the acknowledged finding: the other tests see every finding open.
    reopened = page.request.post(
        f"/api/findings/{rows[1]}/status",
        data={"action": "reopen"},
        headers={"X-Proctor-Client": "tests"},
    )
    assert reopened.ok, reopened.text()


def test_the_inbox_is_accessible_and_fits_a_phone(page: Page) -> None:
    phone = page
    phone.set_viewport_size(PHONE)
    _ready(phone)
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the inbox is {width} px wide at 375 px"
    assert_accessible(phone, "the inbox at 375 px")
    screenshot(phone, "inbox-375")


def test_the_conversations_list_sorts_and_filters_by_open_findings(page: Page) -> None:
    per_conversation = [n for label, n in COUNTS.items() if label.startswith("Maintenance")]
    page.goto("/#/conversations")
    expect(page.get_by_role("columnheader", name="Open findings")).to_be_visible()
    page.locator("#conversations-sort").select_option("open_findings")
    expect(page).to_have_url(re.compile(r"sort=open_findings"))
    cells = page.locator("td.open-findings")
    expect(cells.first).to_have_text(str(max(per_conversation)))
    numbers = [int(c) for c in cells.all_inner_texts()]
    assert numbers == sorted(numbers, reverse=True) and len(numbers) == CONVERSATIONS
    expect(page.locator("#conversations-sort")).to_be_focused()
    page.locator("#conversations-order").select_option("asc")
    expect(cells.first).to_have_text(str(min(per_conversation)))
    ascending = [int(c) for c in cells.all_inner_texts()]
    assert ascending == sorted(ascending)
    assert page.locator("td .badge.sev-high").count() == CONVERSATIONS
    page.locator("#conversations-open").select_option("false")
    expect(page.get_by_text("No conversation matches these filters.")).to_be_visible()
    assert_accessible(page, "the conversations list")


def test_the_findings_panel_pages_past_a_hundred_and_opens_on_a_linked_finding(
    page: Page,
) -> None:
    page.goto("/#/conversations")
    page.get_by_role("link", name=BIG).click()
    panel = page.locator("section.findings")
    expect(panel.get_by_role("heading", name=re.compile("^Findings"))).to_have_text(
        f"Findings ({COUNTS[BIG]})"
    )
    pages = panel.get_by_role("navigation", name="Pages of findings")
    expect(pages).to_contain_text(f"1–50 of {COUNTS[BIG]}")
    seen = set(panel.locator("article.finding").evaluate_all("a => a.map(c => c.dataset.finding)"))
    for start in (50, 100):
        pages.get_by_role("button", name="Next").click()
        end = min(start + 50, COUNTS[BIG])
        expect(pages).to_contain_text(f"{start + 1}–{end} of {COUNTS[BIG]}")
        seen |= set(
            panel.locator("article.finding").evaluate_all("a => a.map(c => c.dataset.finding)")
        )
    assert len(seen) == COUNTS[BIG] > 100
    # The panel's filters: only the one failing loop of this conversation.
    panel.locator("#panel-rule").select_option("repeated_action_error")
    expect(panel.get_by_role("heading", name=re.compile("^Findings"))).to_have_text("Findings (1)")
    expect(panel.locator("article.finding")).to_have_count(1)
    panel.locator("#panel-rule").select_option("")
    panel.locator("#panel-severity").select_option("medium")
    expect(panel.locator("article.finding .badge.sev-high")).to_have_count(0)
    expect(panel.locator("article.finding .badge.sev-medium").first).to_be_visible()
    assert (
        panel.locator("article.finding").count()
        == panel.locator("article.finding .badge.sev-medium").count()
    )
    # A link to a finding on the panel's third page opens that page, its card focused.
    conversation = page.url.split("#/conversations/")[1].split("?")[0]
    third = page.request.get(
        f"/api/findings?conversation={conversation}&limit=50&offset=100"
    ).json()["findings"]
    target = third[-1]["finding_id"]
    page.goto(f"/#/conversations/{conversation}?finding={target}")
    card = page.locator(f'article.finding[data-finding="{target}"]')
    expect(card).to_be_focused()
    expect(card).to_be_in_viewport()
    expect(pages).to_contain_text(f"101–{COUNTS[BIG]} of {COUNTS[BIG]}")
    # From the inbox: Enter on the current finding opens it in its conversation, focused.
    _ready(page, "/#/findings?group=conversation")
    page.get_by_role("link", name=BIG).click()
    expect(page.locator("#inbox-count")).to_have_text(f"1–50 of {COUNTS[BIG]} findings")
    page.locator("h1").click()
    page.keyboard.press("j")
    chosen = _rows(page)[1]
    page.keyboard.press("Enter")
    expect(page.locator(f'article.finding[data-finding="{chosen}"]')).to_be_focused()


def test_a_trace_marker_opens_its_finding_on_another_page_of_the_panel_or_past_a_filter(
    page: Page,
) -> None:
    page.goto("/#/conversations")
    page.get_by_role("link", name=BIG).click()
    panel = page.locator("section.findings")
    pages = panel.get_by_role("navigation", name="Pages of findings")
    expect(pages).to_contain_text(f"1–50 of {COUNTS[BIG]}")
    expect(page.locator('[data-page="trace"][data-ready="true"]')).to_be_attached()
    shown = set(panel.locator("article.finding").evaluate_all("a => a.map(c => c.dataset.finding)"))
    markers: list[str] = page.locator("[data-finding-marker]").evaluate_all(
        "m => m.map(b => b.dataset.findingMarker)"
    )
    elsewhere = [finding for finding in markers if finding not in shown]
    assert elsewhere, (
        "every marked finding of the trace's first window is on the panel's first page"
    )
    target = elsewhere[0]
    page.locator(f'[data-finding-marker="{target}"]').first.click()
    card = panel.locator(f'article.finding[data-finding="{target}"]')
    expect(card).to_be_focused()
    expect(pages).not_to_contain_text(f"1–50 of {COUNTS[BIG]}")
    # A filter that hides the finding is cleared to show it.
    panel.locator("#panel-rule").select_option("repeated_action_error")
    expect(panel.get_by_role("heading", name=re.compile("^Findings"))).to_have_text("Findings (1)")
    page.locator(f'[data-finding-marker="{target}"]').first.click()
    expect(card).to_be_focused()
    expect(panel.locator("#panel-rule")).to_have_value("")
