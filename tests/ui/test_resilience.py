"""One panel failing is one panel failing: the conversation page's findings load on their
own (dom.js ``panel``), show a placeholder while they load, and on failure show the error
and a Retry that reruns that panel alone, while the trace beside them stays."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, Request, Route, expect


@pytest.fixture(scope="module")
def server(read_only_server: str) -> str:
    """Its tests only read: the shared server (``tests/ui/conftest.py``)."""
    return read_only_server


@pytest.fixture
def page(fresh_page: Page) -> Page:
    """A context of its own per test: these tests watch what the page fetches, which a
    page that earlier tests loaded the modules into could take from its memory cache."""
    return fresh_page


LEDGER = "nightly ledger export"
"""A conversation with two findings and a trace of several turns."""


def _is_findings(url: str) -> bool:
    """A request of the findings panel (its rules, its page of findings); the inbox's,
    without a conversation, are others."""
    return "/api/findings" in url and "conversation=" in url


def _is_trace(url: str) -> bool:
    return bool(re.search(r"/api/conversations/[^/?]+/transcript", url))


def _open_ledger(page: Page) -> None:
    page.goto("/#/conversations")
    page.get_by_role("link", name=re.compile(LEDGER)).click()


def _counting(page: Page, matches: Callable[[str], bool]) -> list[str]:
    seen: list[str] = []

    def record(request: Request) -> None:
        if matches(request.url):
            seen.append(request.url)

    page.on("request", record)
    return seen


def test_a_failed_findings_request_keeps_the_trace_and_retry_reloads_only_the_findings(
    page: Page,
) -> None:
    # The first attempt never reaches the server, the second gets its error, the third passes.
    outcomes = ["network", "server", "pass"]

    def answer(route: Route) -> None:
        outcome = outcomes.pop(0) if outcomes else "pass"
        if outcome == "network":
            route.abort("connectionrefused")
        elif outcome == "server":
            route.fulfill(
                status=503,
                content_type="application/json",
                body='{"detail": "the store is being migrated; try again in a moment"}',
            )
        else:
            route.continue_()

    page.route(_is_findings, answer)
    traces = _counting(page, _is_trace)
    _open_ledger(page)

    trace = page.locator("[data-page='trace']")
    expect(trace).to_have_attribute("data-ready", "true")
    rows = page.locator("#turns [role=treeitem]")
    expect(rows.first).to_be_visible()
    shown_rows = rows.count()
    # The trace element is marked, to prove a retry does not draw the trace again.
    page.locator("#turns").evaluate("tree => { tree.dataset.probe = 'kept'; }")

    findings = page.locator("section.findings")
    alert = findings.get_by_role("alert")
    expect(alert).to_contain_text("Findings could not be loaded")
    expect(findings).not_to_have_attribute("aria-busy", "true")
    expect(page.get_by_role("heading", name=re.compile(LEDGER), level=1)).to_be_visible()
    expect(rows).to_have_count(shown_rows)

    # Retry from the keyboard: the server's sentence this time, still only this panel.
    retry = findings.get_by_role("button", name="Retry")
    retry.focus()
    page.keyboard.press("Enter")
    expect(alert).to_contain_text("the store is being migrated; try again in a moment")
    expect(findings.get_by_role("button", name="Retry")).to_be_focused()

    findings.get_by_role("button", name="Retry").click()
    expect(findings.locator("article.finding")).to_have_count(2)
    expect(findings.get_by_role("alert")).to_have_count(0)
    expect(findings.get_by_role("heading", name=re.compile(r"^Findings"))).to_be_visible()
    # Focus stays in the panel whose Retry button it was on.
    assert findings.evaluate("panel => panel.contains(document.activeElement)")
    # The trace was neither wiped nor requested again.
    expect(page.locator("#turns[data-probe='kept']")).to_have_count(1)
    expect(rows).to_have_count(shown_rows)
    assert len(traces) == 1, traces
    # The evidence links of the loaded findings still lead into the trace beside them.
    card = findings.locator("article.finding", has_text="Claim that the tests pass")
    card.get_by_role("link", name=re.compile("Verified: the suite passes")).click()
    expect(page.locator("#turns .highlight mark")).to_have_text(
        "Verified: the suite passes and `tsc --noEmit` is clean."
    )


def test_the_findings_panel_shows_a_placeholder_and_the_trace_does_not_wait_for_it(
    page: Page,
) -> None:
    held: list[Route] = []
    released = False

    def hold(route: Route) -> None:
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(_is_findings, hold)
    with page.expect_request(lambda request: _is_findings(request.url)):
        _open_ledger(page)

    findings = page.locator("section.findings")
    expect(findings).to_have_attribute("aria-busy", "true")
    expect(findings).to_contain_text("Loading findings…")
    # The trace is shown and ready while the findings are still on their way.
    expect(page.locator("[data-page='trace']")).to_have_attribute("data-ready", "true")
    expect(page.locator("#turns [role=treeitem]").first).to_be_visible()

    released = True
    for route in held:
        route.continue_()
    expect(findings.locator("article.finding")).to_have_count(2)
    expect(findings).not_to_have_attribute("aria-busy", "true")
    expect(findings.get_by_text("Loading findings…")).to_have_count(0)


def test_a_page_does_not_wait_for_other_pages_modules_and_theirs_are_not_not_found(
    page: Page,
) -> None:
    # One optional page module (the story graph's) is slow to arrive.
    held: list[Route] = []
    released = False
    graph_module = re.compile(r"/ui/js/pages/graph\.js$")

    def hold(route: Route) -> None:
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(graph_module, hold)
    _open_ledger(page)
    # The conversation is shown meanwhile; the other pages' modules are asked for after it.
    expect(page.locator("[data-page='trace']")).to_have_attribute("data-ready", "true")
    page.wait_for_function(
        "() => performance.getEntriesByType('resource')"
        ".some((entry) => entry.name.endsWith('/ui/js/pages/inbox.js'))"
    )
    assert held, "the graph module was requested"
    # Its page, asked for before its module arrived, waits for it instead of "Not found".
    page.get_by_role("link", name="Story graph").click()
    expect(page.get_by_role("heading", name="Not found")).to_have_count(0)
    released = True
    for route in held:
        route.continue_()
    expect(page.get_by_role("heading", name="Story graph", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="Not found")).to_have_count(0)
