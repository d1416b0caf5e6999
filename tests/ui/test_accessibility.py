"""Every page of the web UI passes axe-core with no serious or critical violation, on a
desktop and at 375 px, in light and dark; the skip link moves focus without routing.

The checks run on the seeded store (examples, findings, a published review), so the pages
show real content: tables, finding cards with severity badges, tool output in code blocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect

from tests.ui.accessibility import (
    assert_accessible,
    describe,
    serious_and_empty_headers,
)
from tests.ui.conftest import DESKTOP, PHONE


@pytest.fixture(scope="module")
def server(read_only_server: str) -> str:
    """Its tests only read: the shared server (``tests/ui/conftest.py``)."""
    return read_only_server


LEDGER = "nightly ledger export"
"""A conversation with findings of several severities and tool calls with long output."""


def _conversation(page: Page) -> Locator:
    page.goto("/#/conversations")
    page.get_by_role("link", name=re.compile(LEDGER)).click()
    return page.get_by_role("heading", name=re.compile("^Findings"))


def _visit(path: str, heading: str) -> Callable[[Page], Locator]:
    def visit(page: Page) -> Locator:
        page.goto(f"/#{path}")
        return page.get_by_role("heading", name=heading, level=1)

    return visit


def _notifications(page: Page) -> Locator:
    page.goto("/#/conversations")
    expect(page.get_by_role("heading", name="Conversations", level=1)).to_be_visible()
    page.get_by_role("button", name=re.compile("^Notifications")).click()
    return page.get_by_role("heading", name="Notifications", level=2)


PAGES: dict[str, Callable[[Page], Locator]] = {
    "conversations": _visit("/conversations", "Conversations"),
    "a conversation": _conversation,
    "the findings inbox": _visit("/findings", "Findings"),
    "the notifications panel": _notifications,
    "reviews": _visit("/reviews", "Reviews"),
    "story graph": _visit("/graph", "Story graph"),
    "activity": _visit("/activity", "Activity"),
    "plans": _visit("/plans", "Plans"),
    "settings": _visit("/settings", "Settings"),
}


@pytest.fixture
def themed_page(page: Page, request: pytest.FixtureRequest) -> Page:
    """The page at the parametrized size and colour scheme; page errors fail the test."""
    size, scheme = request.param
    page.set_viewport_size(size)
    page.emulate_media(color_scheme=scheme)
    return page


Scheme = Literal["light", "dark"]
LOOKS: list[tuple[ViewportSize, Scheme]] = [(DESKTOP, "light"), (PHONE, "light"), (DESKTOP, "dark")]


@pytest.mark.parametrize(
    "themed_page", LOOKS, ids=["desktop", "375px", "desktop-dark"], indirect=True
)
def test_every_page_has_no_serious_or_critical_axe_violation(themed_page: Page) -> None:
    page = themed_page
    failures = []
    for name, visit in PAGES.items():
        expect(visit(page)).to_be_visible()
        # Wait for every panel of the page, not only its heading.
        expect(page.locator("main").get_by_text("Loading…")).to_have_count(0)
        # One axe run per page and look; a column header says what its column holds, to a
        # screen reader at least (``empty``).
        found, empty = serious_and_empty_headers(page)
        if found:
            failures.append(f"{name}:\n{describe(found)}")
        if empty:
            failures.append(f"{name}:\n{describe(empty)}")
    assert not failures, "axe-core found serious or critical violations:\n" + "\n".join(failures)


SEVERITIES = ["critical", "high", "medium", "low", "info"]


@pytest.mark.parametrize(
    "themed_page", [(DESKTOP, "light"), (DESKTOP, "dark")], ids=["light", "dark"], indirect=True
)
def test_severity_badges_and_digested_cards_meet_aa_contrast(themed_page: Page) -> None:
    page = themed_page
    page.goto("/#/settings")
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    # Every severity as the UI draws it (app.css): a badge on a card, on a digested card,
    # and as a rule's words; the seeded store need not hold every severity to check them.
    page.evaluate(
        """(severities) => {
            const probe = document.createElement("section");
            probe.id = "contrast-probe";
            for (const digested of [false, true]) {
                for (const severity of severities) {
                    const card = document.createElement("article");
                    card.className = `card finding sev-${severity}${digested ? " digested" : ""}`;
                    const badge = document.createElement("span");
                    badge.className = `badge sev-${severity}`;
                    badge.textContent = severity;
                    const muted = document.createElement("span");
                    muted.className = "muted";
                    muted.textContent = "rule unverified_claim v1";
                    card.append(badge, " ", muted);
                    probe.append(card);
                }
            }
            document.getElementById("main").append(probe);
        }""",
        SEVERITIES,
    )
    expect(page.locator("#contrast-probe .badge")).to_have_count(2 * len(SEVERITIES))
    assert_accessible(page, "severity badges", include="#contrast-probe")


def test_the_skip_link_focuses_the_main_region_without_leaving_the_page(page: Page) -> None:
    page.goto("/#/settings")
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    # Still the same page: the router did not take "#main" for a route.
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="Not found")).to_have_count(0)
    assert page.evaluate("location.hash") == "#/settings"
    # Back and forward still move between pages, not to a "#main" entry.
    page.goto("/#/plans")
    expect(page.get_by_role("heading", name="Plans", level=1)).to_be_visible()
    page.go_back()
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()


def test_a_scrollable_code_block_can_be_reached_and_scrolled_from_the_keyboard(
    page: Page,
) -> None:
    expect(_conversation(page)).to_be_visible()
    expect(page.locator("[data-page='trace'][data-ready='true']")).to_be_attached()
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    blocks = page.locator("main pre").evaluate_all(
        """els => els.filter(el => el.offsetParent !== null).map(el => ({
            overflows: el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1,
            tab: el.getAttribute("tabindex"), role: el.getAttribute("role"),
            label: el.getAttribute("aria-label")}))"""
    )
    overflowing = [b for b in blocks if b["overflows"]]
    assert overflowing, "the conversation shows no code block long enough to scroll"
    # Each one that scrolls is a named tab stop; one that fits adds no tab stop.
    assert all(b["tab"] == "0" and b["role"] == "region" and b["label"] for b in overflowing), (
        overflowing
    )
    assert all(b["tab"] is None for b in blocks if not b["overflows"]), blocks
    first = page.locator("main pre[tabindex='0']").first
    first.focus()
    expect(first).to_be_focused()
    page.keyboard.press("PageDown")
    page.wait_for_function("el => el.scrollTop > 0", arg=first.element_handle())
    # A block that is unfolded ("Show all") or opened later is watched too.
    assert_accessible(page, "a conversation with scrollable code blocks", include=".trace")
