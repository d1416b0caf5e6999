"""The shell loads what the address needs first: the story graph asks for its data before
any other page's module or markdown-it is requested, a conversation still renders Markdown,
and every other page still opens (its module loaded once the first page is shown, or at
once when it is asked for sooner)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Request, Route, expect

from proctor.api._ui import shell_modules, static_imports


@pytest.fixture(scope="module")
def server(read_only_server: str) -> str:
    """Its tests only read: the shared server (``tests/ui/conftest.py``)."""
    return read_only_server


@pytest.fixture
def page(fresh_page: Page) -> Page:
    """A context of its own per test: these tests watch what the page fetches, which a
    page that earlier tests loaded the modules into could take from its memory cache."""
    return fresh_page


GRAPH_DATA = re.compile(r"/api/results/[^/?]+/graph\?")
NOT_FOR_THE_GRAPH = re.compile(
    r"/ui/(vendor/markdown-it\.min\.js|js/markdown\.js|js/json-view\.js"
    r"|js/pages/(conversations?|trace-tree|subagent-card|findings-panel|inbox|reviews|plans"
    r"|settings|activity|suggestions)\.js)$"
)


def _recorded(page: Page) -> list[str]:
    urls: list[str] = []

    def record(request: Request) -> None:
        urls.append(request.url)

    page.on("request", record)
    return urls


def test_the_graph_page_asks_for_its_data_before_any_other_pages_module_or_markdown_it(
    page: Page,
) -> None:
    urls = _recorded(page)
    page.goto("/#/graph")
    expect(page.locator("[data-page='graph']")).to_have_attribute("data-ready", "true")
    first_data = next(i for i, url in enumerate(urls) if GRAPH_DATA.search(url))
    before = urls[:first_data]
    assert any(url.endswith("/ui/js/pages/graph.js") for url in before)
    assert [url for url in before if NOT_FOR_THE_GRAPH.search(url)] == []
    # Once the graph is shown, the other pages' modules follow: the next page opens at once.
    page.wait_for_function(
        "() => performance.getEntriesByType('resource')"
        ".some((entry) => entry.name.endsWith('/ui/js/pages/conversations.js'))"
    )
    page.get_by_role("link", name="Conversations").first.click()
    expect(page.get_by_role("heading", name="Conversations", level=1)).to_be_visible()


def test_markdown_it_is_fetched_for_a_conversation_and_its_text_renders_as_markdown(
    page: Page,
) -> None:
    urls = _recorded(page)
    page.goto("/#/conversations")
    page.locator("main table a").first.click()
    expect(page.locator("[data-page='trace']")).to_have_attribute("data-ready", "true")
    assert any(url.endswith("/ui/vendor/markdown-it.min.js") for url in urls)
    assert page.evaluate("() => typeof window.markdownit") == "function"
    expect(page.locator("#turns .md").first).to_be_attached()
    expect(page.locator("#turns .md.plain-text")).to_have_count(0)


def test_a_page_asked_for_before_its_module_was_wanted_loads_it_instead_of_not_found(
    page: Page,
) -> None:
    # The first page (the graph) is held back, so the others' modules are not loaded yet.
    held: list[Route] = []
    page.route(GRAPH_DATA, lambda route: held.append(route))
    with page.expect_request(GRAPH_DATA):
        page.goto("/#/graph")
    page.evaluate("() => { location.hash = '#/findings'; }")
    expect(page.get_by_role("heading", name="Findings", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="Not found")).to_have_count(0)
    page.evaluate("() => { location.hash = '#/no-such-page'; }")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    for route in held:
        route.abort()


def test_each_page_module_names_exactly_the_modules_it_imports_beyond_the_shells(
    page: Page,
) -> None:
    page.goto("/#/graph")
    listed = page.evaluate(
        "async () => (await import('/ui/js/app.js')).PAGE_MODULES"
        ".map(([name, , imports]) => [name, imports])"
    )
    shell = set(shell_modules())
    assert len(listed) >= 8
    for name, imports in listed:
        module = f"js/pages/{name}.js"
        expected = sorted(static_imports(module) - shell - {module})
        assert sorted(f"js/{path}" for path in imports) == expected, (
            f"app.js PAGE_MODULES: {name} should list {expected} (without the leading js/)"
        )
