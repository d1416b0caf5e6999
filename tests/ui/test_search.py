"""The header's search box (SPEC REV-14, UI-3) in a real browser: a phrase from a real
transcript is found, its words are marked, and the hit leads to its turn in the
conversation; `/` focuses the box except while typing or on the findings inbox."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from proctor.ingest import ingest
from proctor.search import index_sources
from proctor.store import open_store
from tests.backends import copy_database
from tests.ui.accessibility import assert_accessible
from tests.ui.conftest import screenshot
from tests.ui.private_server import Served, serve_home

REAL = (
    "claude-code/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/"
    "b25638d7-b104-4f06-a797-70ac33d069ed.jsonl",
    "claude-code/claude-code-log/real_projects/-Users-dain-workspace-claude-code-log-sample/"
    "71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl",
)
"""Real transcripts the phrases come from (two sessions of two projects)."""
WORD = re.compile(r"[A-Za-z]{3,}")


IMPORTED: dict[str, set[str]] = {}
"""The conversation ids each real transcript was imported as (filled by ``served``)."""


def _ids(path: Path) -> set[str]:
    store = open_store(path, read_only=True)
    try:
        return {r.conversation_id for r in store.list_conversations(include_children=True)}
    finally:
        store.close()


@pytest.fixture(scope="module")
def served(
    seeded_database: Path, transcripts_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """The seeded store plus two real transcripts from ``../shared/transcripts``."""
    home = tmp_path_factory.mktemp("ui-search")
    database = home / "proctor.db"
    copy_database(seeded_database, database)
    for name in REAL:
        before = _ids(database)
        store = open_store(database)
        try:
            ingest(store, [transcripts_dir / name])
        finally:
            store.close()
        IMPORTED[name] = _ids(database) - before
    # Indexed before serving, vectors too: these tests are about the box, not the indexer's
    # pace (a server embedding meanwhile would reorder the hybrid ranking between two calls).
    store = open_store(database)
    try:
        index_sources(store)
    finally:
        store.close()
    with serve_home(home) as running:
        yield running


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


def _phrases(served: Served, name: str) -> list[tuple[str, str, str]]:
    """(conversation id, message source id, a phrase of four words from it) for messages
    of the transcript ``name`` whose phrase occurs in no other message of the store."""
    store = open_store(served.database, read_only=True)
    try:
        texts: dict[str, str] = {}
        owners: dict[str, str] = {}
        for row in store.list_conversations(include_children=True, limit=500):
            for message in store.transcript(row.conversation_id).messages:
                texts[message.source_id] = " ".join(message.text.split())
                owners[message.source_id] = row.conversation_id
        origin = IMPORTED[name]
    finally:
        store.close()
    found = []
    for source_id, text in texts.items():
        if owners[source_id] not in origin:
            continue
        tokens = text.split()
        runs = [
            " ".join(tokens[i : i + 4])
            for i in range(len(tokens) - 3)
            if all(WORD.fullmatch(token) for token in tokens[i : i + 4])
        ]
        if not runs:
            continue
        phrase = runs[len(runs) // 2]
        if sum(phrase.lower() in other.lower() for other in texts.values()) == 1:
            found.append((owners[source_id], source_id, phrase))
    assert found, f"no message of {name} has a phrase of its own"
    return found


@pytest.mark.parametrize("name", REAL)
def test_a_phrase_from_a_real_transcript_is_found_and_leads_to_its_turn(
    page: Page, served: Served, name: str
) -> None:
    phrases = _phrases(served, name)
    conversation_id, source_id, phrase = phrases[len(phrases) // 2]
    page.goto("/#/conversations")
    expect(page.locator("#main h1")).to_be_visible()

    page.keyboard.press("/")
    box = page.locator("#search-box")
    expect(box).to_be_focused()
    box.press_sequentially(phrase, delay=5)

    panel = page.locator("#search-panel")
    expect(panel).to_be_visible()
    hit = panel.locator(f'a[data-hit-id="{source_id}"]')
    expect(hit).to_have_count(1)
    messages = panel.locator('[data-group="messages"]')
    expect(messages.get_by_role("heading")).to_contain_text("Messages")
    item = hit.locator("xpath=ancestor::li[1]")
    marks = item.locator("mark")
    expect(marks.first).to_be_visible()
    first_word = phrase.split()[0].lower()
    assert any(text.lower().startswith(first_word[:6]) for text in marks.all_inner_texts())
    screenshot(page, f"search-box-{name.split('/')[0]}")

    hit.click()
    expect(panel).to_be_hidden()
    expect(page).to_have_url(
        re.compile(
            re.escape(conversation_id.replace(":", "%3A")) + r"|" + re.escape(conversation_id)
        )
    )
    row = page.locator("#turns .highlight")
    expect(row).to_have_count(1)
    assert source_id.split(":")[-1].replace("-", "_")[:12] in (
        row.get_attribute("id") or ""
    ).replace("-", "_")
    expect(row).to_contain_text(phrase.split()[0])


def test_hits_are_grouped_by_kind_with_graph_objects_linked_to_the_graph(
    page: Page, server: str
) -> None:
    answer = httpx.get(
        timeout=30, url=f"{server}/api/search", params={"q": "pytest failing", "limit": 12}
    ).json()
    kinds = {hit["doc_type"] for hit in answer["hits"]}
    page.goto("/#/conversations")
    page.locator("#search-box").fill("pytest failing")

    panel = page.locator("#search-panel")
    expect(panel.locator(".search-hit")).to_have_count(len(answer["hits"]))
    groups = panel.locator("[data-group]")
    shown = groups.evaluate_all("(nodes) => nodes.map((n) => n.dataset.group)")
    order = ["messages", "events", "entities", "story_lines", "other"]
    assert shown == sorted(shown, key=order.index)
    for hit in answer["hits"]:
        link = panel.locator(f'a[data-hit-id="{hit["doc_id"]}"]').first
        href = link.get_attribute("href") or ""
        if hit["doc_type"] in {"message", "tool_call"}:
            assert href.startswith(f"#/conversations/{quote(hit['conversation_id'], safe='')}?")
        else:
            assert href == f"#/graph?select={hit['doc_type']}%3A{quote(hit['doc_id'], safe='')}"
    assert kinds - {"message", "tool_call"}, "the review's graph objects are searched too"


def test_the_box_pages_every_result_and_says_when_the_index_is_catching_up(
    page: Page, server: str
) -> None:
    page.goto("/#/conversations")
    box = page.locator("#search-box")
    box.fill("invoice")
    box.press("Enter")

    expect(page).to_have_url(re.compile(r"#/search\?q=invoice$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Search: invoice")
    expect(page.locator("#search-page-results .search-hit").first).to_be_visible()
    status = httpx.get(timeout=30, url=f"{server}/api/search", params={"q": "invoice"}).json()[
        "index"
    ]
    note = page.locator("#search-page-results .search-index-note")
    if status["stale"] or status["indexing"]:
        expect(note).to_contain_text("catching up")
    else:
        expect(note).to_have_count(0)


def test_a_list_answering_late_does_not_draw_over_the_search_page(page: Page, server: str) -> None:
    """The conversations list still loading when a search is submitted finishes into a view
    no longer shown: the search page stays (the race CI once met under load)."""
    held: list[Route] = []
    lists = re.compile(r"/api/conversations(\?|$)")

    def hold(route: Route) -> None:
        held.append(route)

    page.route(lists, hold)
    page.goto("/#/conversations")
    for _ in range(500):
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "the list never asked for its conversations"
    box = page.locator("#search-box")
    box.fill("invoice")
    box.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Search: invoice")
    expect(page.locator("#search-page-results .search-hit").first).to_be_visible()
    for route in held:
        route.continue_()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_role("heading", level=1)).to_have_text("Search: invoice")
    expect(page.locator("#main table")).to_have_count(0)
    expect(page.locator("#search-page-results .search-hit").first).to_be_visible()


def test_observed_markup_in_hits_stays_text(page: Page, server: str) -> None:
    page.goto("/#/conversations")
    page.locator("#search-box").fill("script alert")
    panel = page.locator("#search-panel")
    expect(panel.locator(".search-status")).to_contain_text("for “script alert”")
    assert panel.locator("script, img, iframe").count() == 0
    assert page.evaluate("window.__pwned === undefined")


def test_slash_types_in_fields_and_belongs_to_the_inbox_filter_on_its_page(
    page: Page, server: str
) -> None:
    page.goto("/#/findings")
    expect(page.locator("#inbox-q")).to_be_visible()
    page.locator("#main").focus()
    page.keyboard.press("/")
    expect(page.locator("#inbox-q")).to_be_focused()
    expect(page.locator("#search-box")).to_have_value("")

    page.goto("/#/conversations")
    expect(page.locator("#main h1")).to_be_visible()
    page.locator("#main").focus()
    page.keyboard.press("/")
    box = page.locator("#search-box")
    expect(box).to_be_focused()
    box.press_sequentially("a/b")
    expect(box).to_have_value("a/b")
    box.press("Escape")
    box.press("Escape")
    expect(box).not_to_be_focused()


def test_typing_is_debounced_and_a_late_answer_to_an_older_query_is_dropped(
    page: Page, server: str
) -> None:
    asked: list[str] = []
    held: list[Route] = []

    def hold_the_first(route: Route) -> None:
        asked.append(route.request.url)
        if "q=invoice+rounding" in route.request.url and not held:
            held.append(route)  # answered only after the newer query's answer shows
        else:
            route.continue_()

    page.route("**/api/search?*", hold_the_first)
    page.goto("/#/conversations")
    box = page.locator("#search-box")
    status = page.locator("#search-panel .search-status")
    box.press_sequentially("invoice rounding", delay=20)
    expect(status).to_have_text("Searching…")
    # The page says "Searching…" as it sends the request; the route reaches this process a
    # moment later. Wait for the whole query's request (routes arrive in the order sent, so
    # every earlier one has arrived too), at most 10 s.
    for _ in range(400):
        if held:
            break
        page.wait_for_timeout(25)
    # Debounced: far fewer requests than keystrokes.
    assert 1 <= len(asked) < len("invoice rounding") // 2

    box.fill("ledger")
    expect(status).to_contain_text("“ledger”")
    shown = page.locator("#search-panel .search-results").inner_text()
    assert held, "the first query was held"
    with page.expect_response(lambda response: "q=invoice+rounding" in response.url):
        held[0].continue_()
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    expect(status).to_contain_text("“ledger”")
    assert page.locator("#search-panel .search-results").inner_text() == shown


def test_the_open_results_and_the_results_page_have_no_serious_axe_violation(
    page: Page, server: str
) -> None:
    page.goto("/#/conversations")
    page.locator("#search-box").fill("invoice")
    expect(page.locator("#search-panel .search-hit").first).to_be_visible()
    assert_accessible(page, "search box with results")
    page.locator("#search-box").press("Enter")
    expect(page.locator("#search-page-results .search-hit").first).to_be_visible()
    assert_accessible(page, "search results page")


@pytest.mark.parametrize("kind", ["entity", "event"])
def test_a_graph_object_hit_opens_the_story_graph_with_that_object_selected(
    page: Page, server: str, kind: str
) -> None:
    query = "npm run db:migrate failed"
    answer = httpx.get(f"{server}/api/search", params={"q": query, "limit": 50}, timeout=60)
    assert kind in {hit["doc_type"] for hit in answer.json()["hits"]}, f"{kind}s are searched"
    page.goto("/#/conversations")
    page.locator("#search-box").fill(query)
    # The box shows the best few; the results page shows them all. The page's own first hit
    # of the kind is followed (two searches may order equal scores differently).
    page.locator("#search-box").press("Enter")
    link = page.locator(f'#search-page-results a[data-hit-type="{kind}"]').first
    expect(link).to_be_visible()
    doc_id = link.get_attribute("data-hit-id") or ""
    assert link.get_attribute("href") == f"#/graph?select={kind}%3A{quote(doc_id, safe='')}"
    title = link.inner_text()

    link.click()

    expect(page).to_have_url(re.compile(r"#/graph\?select="))
    expect(page.get_by_role("heading", name="Story graph", level=1)).to_be_visible()
    detail = page.locator("#graph-detail")
    expect(detail).to_contain_text(title[:30])
