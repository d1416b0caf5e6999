"""The findings stream beside a readable transcript (SPEC UI-3, SUP-8), in a real browser."""

from __future__ import annotations

import re

from playwright.sync_api import Page, Route, expect

from tests.ui.conftest import PHONE, screenshot

CODEX = "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
RANKS = ["critical", "high", "medium", "low", "info"]


def _severities(page: Page) -> list[str]:
    """The severity of every finding card, in the order the stream shows them."""
    found: list[str] = page.locator("article.finding").evaluate_all(
        "cards => cards.map(c => c.className.match(/sev-(\\w+)/)[1])"
    )
    return found


def _open_conversation(page: Page, title: str) -> None:
    page.goto("/")
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
    page.get_by_role("link", name=re.compile(re.escape(title))).click()
    expect(page.get_by_role("heading", name=re.compile("^Findings"))).to_be_visible()


def test_the_conversation_list_leads_to_a_transcript_with_its_findings(page: Page) -> None:
    page.goto("/")
    expect(page.get_by_role("link", name=re.compile("nightly ledger export"))).to_be_visible()
    screenshot(page, "conversations-desktop")
    _open_conversation(page, "nightly ledger export")
    cards = page.locator("article.finding")
    expect(cards).to_have_count(2)
    # Highest severity first; each card names its rule and version.
    assert _severities(page) == sorted(_severities(page), key=RANKS.index)
    claim = cards.filter(has_text="Claim that the tests pass after a failing test run")
    expect(claim).to_contain_text("rule unverified_claim v1")
    screenshot(page, "findings-desktop")


def test_an_evidence_link_scrolls_to_the_cited_source_and_marks_the_range(page: Page) -> None:
    _open_conversation(page, "nightly ledger export")
    card = page.locator("article.finding", has_text="Claim that the tests pass")
    card.get_by_role("link", name=re.compile("Verified: the suite passes")).click()
    turn = page.locator(".trace-item.highlight")
    expect(turn).to_have_count(1)
    expect(turn.locator("mark")).to_have_text(
        "Verified: the suite passes and `tsc --noEmit` is clean."
    )
    expect(turn).to_be_focused()
    # The second citation is inside a tool call's result: its range is marked there.
    card.get_by_role("link", name=re.compile("Tests 1 failed")).click()
    expect(page.locator(".trace-item.highlight mark")).to_have_text(re.compile(r"Tests\s+1 failed"))


def test_finding_actions_work_from_the_keyboard_alone(page: Page) -> None:
    _open_conversation(page, "nightly ledger export")
    card = page.locator("article.finding", has_text="Claim that the tests pass")
    acknowledge = card.get_by_role("button", name="Acknowledge")
    acknowledge.focus()
    expect(acknowledge).to_be_focused()
    page.keyboard.press("Enter")
    expect(card).to_contain_text("acknowledged")
    expect(card.get_by_role("button", name="Acknowledge")).to_have_count(0)
    # Tab to "Resolve" and press Space.
    focused = card.get_by_role("button", name="Resolve")
    for _ in range(6):
        if focused.evaluate("el => el === document.activeElement"):
            break
        page.keyboard.press("Tab")
    expect(focused).to_be_focused()
    page.keyboard.press(" ")
    expect(card).to_contain_text("resolved")
    # The change is stored: a reload shows it.
    page.reload()
    expect(page.locator("article.finding", has_text="Claim that the tests pass")).to_contain_text(
        "resolved"
    )


def test_focus_moved_while_the_transcript_loads_stays_where_it_was_put(page: Page) -> None:
    # The findings show before the transcript when its answer is late; a keyboard user may
    # already be on a finding's button then. The page finishing its load must not move
    # focus away (it did: to the main region, which failed the keyboard test under load).
    held: list[Route] = []
    transcript = re.compile(r"/api/conversations/[^/?]+/transcript")
    page.route(transcript, lambda route: held.append(route))
    page.goto("/")
    with page.expect_request(lambda request: transcript.search(request.url) is not None):
        page.get_by_role("link", name=re.compile("nightly ledger export")).click()
    action = page.locator("#finding-list button").first
    action.focus()
    expect(action).to_be_focused()
    assert len(held) == 1 and page.locator("#turns li").count() == 0, "the transcript is held"

    held[0].continue_()
    page.unroute(transcript)
    expect(page.locator("#turns li").first).to_be_visible()
    # The page's load ends in the same task that shows the turns: focus has settled now.
    assert action.evaluate("el => el === document.activeElement"), "focus was moved"
    # Where nobody moved it, focus goes to the new page, as before.
    page.get_by_role("link", name="Conversations").first.click()
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
    expect(page.locator("#main")).to_be_focused()


def test_a_digested_card_collapses_to_one_line_and_expands_again(page: Page) -> None:
    _open_conversation(page, "nightly ledger export")
    card = page.locator("article.finding", has_text="Claim that the tests pass")
    card.get_by_role("button", name="Collapse").click()
    expect(card).to_have_class(re.compile(r"\bdigested\b"))
    expect(card.locator(".evidence")).to_have_count(0)
    page.reload()
    card = page.locator("article.finding", has_text="Claim that the tests pass")
    expect(card).to_have_class(re.compile(r"\bdigested\b"))
    card.get_by_role("button", name="Expand").press("Enter")
    expect(card.locator(".evidence")).to_be_visible()


def test_hostile_transcript_content_renders_as_inert_text(page: Page) -> None:
    _open_conversation(page, "Render me")
    expect(page.locator("#turns")).to_contain_text("<script>window.__pwned='script'</script>")
    expect(page.locator("#turns")).to_contain_text("onerror=\"window.__pwned='img'\"")
    expect(page.get_by_role("heading", level=1)).to_contain_text('<img src=x onerror="')
    # Findings quote the hostile output too; still text. Higher severity comes first.
    expect(page.locator("article.finding").first).to_be_visible()
    shown = _severities(page)
    assert len(set(shown)) > 1 and shown == sorted(shown, key=RANKS.index), shown
    for selector in ("main script", "main img", "main iframe", "main svg", "main b"):
        assert page.locator(selector).count() == 0, selector
    assert page.evaluate("() => window.__pwned") is None
    screenshot(page, "xss-inert-desktop")


def test_the_findings_page_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    _open_conversation(page, "nightly ledger export")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    expect(page.locator("article.finding").first.get_by_role("button").first).to_be_visible()
    screenshot(page, "findings-375")
