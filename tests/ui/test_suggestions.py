"""The suggestions inbox and what accepting made (SPEC HB-5, HB-6) in a real browser:
accept and ignore from the inbox, the changes behind a suggestion, and the tasks and
memories accepting made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from proctor.heartbeat.suggestions import make_suggestions
from proctor.store import open_store
from tests.backends import copy_database
from tests.ui.accessibility import assert_accessible
from tests.ui.conftest import screenshot
from tests.ui.private_server import Served, serve_home


@pytest.fixture(scope="module")
def served(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The seeded store with the suggestions its review's changes make (rule text)."""
    home = tmp_path_factory.mktemp("ui-suggestions")
    copy_database(seeded_database, home / "proctor.db")
    store = open_store(home / "proctor.db")
    try:
        result_id = store.overview(None, 1)[0].result_id
        make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)
    finally:
        store.close()
    with serve_home(home) as running:
        yield running


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


def _open(server: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = httpx.get(
        timeout=30, url=f"{server}/api/suggestions", params={"status": "open", "limit": 100}
    ).json()["suggestions"]
    return found


def _card(page: Page, suggestion_id: str) -> Locator:
    return page.locator(f'article.suggestion[data-suggestion="{suggestion_id}"]')


def test_the_inbox_shows_why_and_the_changes_behind_a_suggestion(page: Page, server: str) -> None:
    suggestion = next(s for s in _open(server) if s["kind"] == "open_item")
    page.goto("/#/suggestions")
    expect(page.get_by_role("heading", name="Suggestions", level=1)).to_be_visible()
    card = _card(page, suggestion["suggestion_id"])
    expect(card.get_by_role("heading", level=2)).to_have_text(suggestion["title"])
    expect(card.locator(".suggestion-why")).to_contain_text(suggestion["rule_text"])

    card.locator("summary").click()
    evidence = card.locator(".suggestion-evidence li")
    expect(evidence).to_have_count(min(len(suggestion["evidence"]), 20))
    first = suggestion["evidence"][0]
    link = evidence.first.get_by_role("link")
    assert (link.get_attribute("href") or "").endswith(
        f"?source={first['source_id'].replace(':', '%3A')}"
    )
    expect(evidence.first.locator("blockquote")).not_to_be_empty()
    expect(card.locator(".suggestion-object")).to_contain_text(suggestion["result_id"][:8])
    screenshot(page, "suggestions-inbox")


def test_accepting_an_open_item_from_the_inbox_makes_a_task_listed_with_it(
    page: Page, server: str
) -> None:
    item = next(s for s in _open(server) if s["kind"] == "open_item")
    page.goto("/#/suggestions")
    card = _card(page, item["suggestion_id"])
    card.get_by_role("button", name="Accept").click()

    expect(card).to_have_count(0)
    expect(page.locator("#suggestions-live")).to_contain_text(f"Accepted: {item['title']}")
    shown = httpx.get(timeout=30, url=f"{server}/api/suggestions/{item['suggestion_id']}").json()
    assert shown["status"] == "accepted"

    page.get_by_role("link", name="Tasks and memories they made").click()
    task = page.locator("#task-list li", has_text=item["title"])
    expect(task).to_have_count(1)
    expect(task).to_contain_text(f"From suggestion {item['suggestion_id'][:8]}")
    expect(task.locator(".badge.status")).to_have_text("paused")

    page.goto("/#/suggestions?status=accepted")
    expect(_card(page, item["suggestion_id"]).locator(".badge.status")).to_have_text("accepted")


def test_ignoring_from_the_inbox_moves_it_to_the_ignored_list_and_makes_nothing(
    page: Page, server: str
) -> None:
    target = _open(server)[-1]
    tasks_before = httpx.get(timeout=30, url=f"{server}/api/tasks").json()["tasks"]
    page.goto("/#/suggestions")
    card = _card(page, target["suggestion_id"])
    card.get_by_role("button", name="Ignore").click()

    expect(card).to_have_count(0)
    assert target["suggestion_id"] not in {s["suggestion_id"] for s in _open(server)}
    assert httpx.get(timeout=30, url=f"{server}/api/tasks").json()["tasks"] == tasks_before
    page.get_by_role("link", name="Ignored").click()
    ignored = _card(page, target["suggestion_id"])
    expect(ignored.locator(".badge.status")).to_have_text("ignored")
    expect(ignored.get_by_role("button", name="Accept")).to_have_count(0)


def test_accepting_a_convention_records_a_memory_shown_with_its_suggestion(
    page: Page, server: str
) -> None:
    convention = next(s for s in _open(server) if s["kind"] == "convention")
    page.goto("/#/suggestions")
    card = _card(page, convention["suggestion_id"])
    card.get_by_role("button", name="Accept").click()
    expect(card).to_have_count(0)

    page.goto("/#/tasks")
    memory = page.locator("#memory-list li", has_text=f"{convention['suggestion_id'][:8]}")
    expect(memory).to_have_count(1)
    expect(memory.get_by_role("link", name="its entity")).to_have_attribute(
        "href", f"#/graph?select=entity%3A{convention['object_id']}"
    )
    screenshot(page, "tasks-and-memories")


def test_a_failed_decision_says_why_and_keeps_the_card(page: Page, server: str) -> None:
    target = _open(server)[0]
    page.goto("/#/suggestions")
    card = _card(page, target["suggestion_id"])
    expect(card).to_be_visible()
    # Decided elsewhere meanwhile: ignoring an accepted suggestion is refused.
    httpx.post(
        timeout=30,
        url=f"{server}/api/suggestions/{target['suggestion_id']}/accept",
        headers={"X-Proctor-Client": "ui"},
    )
    card.get_by_role("button", name="Ignore").click()

    expect(card.locator(".suggestion-outcome")).to_contain_text("accepted")
    expect(card.get_by_role("button", name="Ignore")).to_be_enabled()


def test_the_inbox_and_what_it_made_have_no_serious_axe_violation(page: Page, server: str) -> None:
    page.goto("/#/suggestions")
    expect(page.locator("article.suggestion").first).to_be_visible()
    page.locator("article.suggestion summary").first.click()
    expect(page.locator(".suggestion-evidence li").first).to_be_visible()
    assert_accessible(page, "suggestions inbox")
    page.goto("/#/tasks")
    expect(page.get_by_role("heading", name="Tasks and memories", level=1)).to_be_visible()
    assert_accessible(page, "tasks and memories")
