"""The continue-discussion card (SPEC UI-5) beyond the prompt file, in a real browser: the
draft copied to the clipboard, and a question asked of the configured model (the scripted
loopback server) whose answer shows with the quoted facts it was given."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from proctor.models import set_default_connection
from proctor.store import open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.backends import copy_database
from tests.ui.accessibility import assert_accessible
from tests.ui.conftest import screenshot
from tests.ui.private_server import Served, serve_home

QUESTION = "Which command is still failing, and since when?"
HOSTILE_ANSWER = "npm run db:migrate still fails <img src=x onerror=\"window.__pwned='answer'\">"


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def served(
    seeded_database: Path, model: ScriptedModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """The seeded store with the scripted model server as its default connection."""
    home = tmp_path_factory.mktemp("ui-continue")
    copy_database(seeded_database, home / "proctor.db")
    store = open_store(home / "proctor.db")
    try:
        store.save_connection(model.connection("scripted"))
        set_default_connection(store, "scripted")
    finally:
        store.close()
    with serve_home(home) as running:
        yield running


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


@pytest.fixture
def clipboard_page(page: Page, server: str) -> Page:
    """A page whose context may read and write the clipboard (until the test ends)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    return page


def _draft(page: Page) -> None:
    page.goto("/#/graph")
    card = page.locator("#graph-continue")
    card.get_by_role("button", name="Prepare draft").click()
    expect(card.get_by_label("Draft")).to_have_value(
        re.compile(r"^Continuing from Proctor's review result")
    )


def test_the_edited_draft_is_copied_to_the_clipboard(clipboard_page: Page) -> None:
    page = clipboard_page
    _draft(page)
    card = page.locator("#graph-continue")
    draft = card.get_by_label("Draft")
    edited = (draft.input_value() or "") + "\nMy message: why does the migration fail?"
    draft.fill(edited)

    card.get_by_role("button", name="Copy draft").click()

    expect(card.locator(".copied")).to_have_text(re.compile("Draft copied to the clipboard"))
    assert page.evaluate("navigator.clipboard.readText()") == edited
    draft.fill("")
    expect(card.get_by_role("button", name="Copy draft")).to_be_disabled()


def test_a_question_is_asked_directly_and_answered_with_the_facts_it_was_given(
    page: Page, model: ScriptedModelServer
) -> None:
    _draft(page)
    card = page.locator("#graph-continue")
    expect(card.locator("#ask-model")).to_contain_text("scripted/scripted-model")
    asked_before = len(model.requests)
    model.push({"answer": HOSTILE_ANSWER, "cited": ["F1", "S1"]})

    card.get_by_label("Question").fill(QUESTION)
    card.get_by_role("button", name="Ask").click()

    answer = card.locator(".model-answer")
    expect(answer).to_have_text(HOSTILE_ANSWER)
    assert page.evaluate("window.__pwned === undefined")
    assert answer.locator("img").count() == 0
    given = card.locator(".given-facts")
    expect(given.locator("summary")).to_contain_text("The facts it was given")
    first = given.locator('li[data-ref="F1"]')
    expect(first).to_have_class(re.compile(r"\bcited\b"))
    expect(given.locator('li[data-ref="S1"] a')).to_have_attribute(
        "href", re.compile(r"^#/conversations/.+\?source=")
    )
    # What the page shows is what the model was sent, as data, with the question after it.
    (request,) = model.requests[asked_before:]
    user = request.body["messages"][1]["content"]
    assert user.rstrip().endswith(QUESTION)
    block = re.search(r"<<<OBSERVED-DATA (\w+)>>>\n(.*?)\n<<<END OBSERVED-DATA \1>>>", user, re.S)
    assert block is not None
    sent = [json.loads(line) for line in block.group(2).splitlines()]
    shown = given.locator("li[data-ref^='F']")
    expect(shown).to_have_count(sum(1 for line in sent if line["ref"].startswith("F")))
    assert sent[0]["text"] in (first.text_content() or "")
    card.locator(".ask").scroll_into_view_if_needed()
    screenshot(page, "continue-ask")


def test_an_empty_question_is_not_sent(page: Page, model: ScriptedModelServer) -> None:
    _draft(page)
    card = page.locator("#graph-continue")
    before = len(model.requests)
    card.get_by_role("button", name="Ask").click()
    expect(card.locator("#ask-answer")).to_contain_text("Write a question first.")
    expect(card.get_by_label("Question")).to_be_focused()
    assert len(model.requests) == before


def test_the_card_with_an_answer_has_no_serious_axe_violation(
    page: Page, model: ScriptedModelServer
) -> None:
    _draft(page)
    card = page.locator("#graph-continue")
    model.push({"answer": "It is still failing.", "cited": ["F1"]})
    card.get_by_label("Question").fill(QUESTION)
    card.get_by_role("button", name="Ask").click()
    expect(card.locator(".model-answer")).to_have_text("It is still failing.")
    assert_accessible(page, "continue card with an answer", include="#graph-continue")
