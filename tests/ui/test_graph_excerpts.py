"""The story graph asks for its graph without the sources' excerpts (the timeline needs only
their times); the List tab, whose open items show them, asks for them when opened."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Request, expect


@pytest.fixture(scope="module")
def server(read_only_server: str) -> str:
    """Its tests only read: the shared server (``tests/ui/conftest.py``)."""
    return read_only_server


GRAPH_DATA = re.compile(r"/api/results/[^/?]+/graph\?")


def _graph_requests(page: Page) -> list[str]:
    urls: list[str] = []

    def record(request: Request) -> None:
        if GRAPH_DATA.search(request.url):
            urls.append(request.url)

    page.on("request", record)
    return urls


def test_the_timeline_asks_without_excerpts_and_the_list_tab_then_shows_them(
    page: Page,
) -> None:
    urls = _graph_requests(page)
    page.goto("/#/graph")
    expect(page.locator("[data-page='graph']")).to_have_attribute("data-ready", "true")
    assert len(urls) == 1 and "excerpts=false" in urls[0]
    with page.expect_response(lambda r: bool(GRAPH_DATA.search(r.url)) and "excerpts" not in r.url):
        page.get_by_role("tab", name="List").click()
    cited = page.locator("#panel-list details.cited")
    expect(cited.first).to_be_attached()
    cited.first.locator("summary").click()
    expect(cited.first.locator("pre.excerpt").first).not_to_have_text("")
    # Back and forth: asked for once.
    page.get_by_role("tab", name="Timeline").click()
    page.get_by_role("tab", name="List").click()
    expect(cited.first.locator("pre.excerpt").first).not_to_have_text("")
    assert len(urls) == 2


def test_a_graph_opened_on_its_list_tab_asks_for_the_excerpts_at_once(page: Page) -> None:
    urls = _graph_requests(page)
    page.goto("/#/graph?tab=list")
    expect(page.locator("[data-page='graph']")).to_have_attribute("data-ready", "true")
    cited = page.locator("#panel-list details.cited")
    cited.first.locator("summary").click()
    expect(cited.first.locator("pre.excerpt").first).not_to_have_text("")
    assert len(urls) == 1 and "excerpts" not in urls[0]
