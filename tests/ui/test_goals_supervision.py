"""The goal panel, the supervision panel and "Remember this" in a real browser (SPEC GOAL-1…3,
SUP-1, SUP-3, SUP-10).

One Claude Code session whose user re-goals is imported and checked with no model (so the
goal comes from the lexical classifier); the supervisor's connection is added with the CLI
once the page has shown that there is none, and points at a scripted model server on
loopback, so "Run now" really runs and spends the session's budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from proctor.store import open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.backends import copy_database, database_env
from tests.supervision.goal_transcripts import CHATTER, RE_GOALS, write_session
from tests.ui.accessibility import axe_violations
from tests.ui.cli import run_commands
from tests.ui.conftest import screenshot
from tests.ui.private_server import Served, serve_home

SESSION = "s-goal-ui"
CLAUDE = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"
"""A bundled example with findings."""
REGOAL = RE_GOALS[1].text  # "Switching gears — draft the release notes for the mobile app."
EXPAND = RE_GOALS[6].text  # "Also add a test for the credit notes."


def _proctor(home: Path, *args: str) -> str:
    env = {"PROCTOR_HOME": str(home), **database_env(home), "PATH": os.environ.get("PATH", "")}
    command = [sys.executable, "-m", "proctor.cli.main", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture(scope="module")
def served(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The seeded store plus the re-goaling session, imported and checked (no model), served."""
    home = tmp_path_factory.mktemp("ui-goals-home")
    copy_database(seeded_database, home / "proctor.db")
    sessions = tmp_path_factory.mktemp("ui-goals-sessions")
    write_session(sessions, SESSION, [CHATTER[0].text, REGOAL, EXPAND])
    env = {"PROCTOR_HOME": str(home), **database_env(home), "PATH": os.environ.get("PATH", "")}
    # The seeded store is checked already: only the new session needs it.
    run_commands(env, [["ingest", str(sessions)], ["check", SESSION]])
    with serve_home(home) as running:
        yield running


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    nothing: dict[str, Any] = {"decisions": []}
    with ScriptedModelServer(responder=lambda _request: nothing) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def conversation_id(served: Served) -> str:
    """The re-goaling session's id, resolved as ``proctor goals`` resolves it (by this
    process: a CLI start is about a second of CPU), once for the module."""
    store = open_store(served.database, read_only=True)
    try:
        return store.resolve_conversation_id(SESSION)
    finally:
        store.close()


def _open(page: Page, conversation_id: str) -> None:
    page.goto(f"/#/conversations/{conversation_id}")
    expect(page.locator("[data-page=trace][data-ready=true]")).to_be_attached()


def test_the_goal_panel_shows_the_versions_and_links_each_to_its_user_turn(
    page: Page, conversation_id: str
) -> None:
    _open(page, conversation_id)
    goal = page.locator("section.goal-panel")

    expect(goal.locator(".goal-current .goal-text")).to_contain_text("Switching gears")
    expect(goal.locator(".goal-current .goal-text")).to_contain_text("Also: Also add a test")
    versions = goal.locator("li.goal-version")
    expect(versions).to_have_count(3)
    expect(versions.nth(0)).to_contain_text("v3 · expanded")
    expect(versions.nth(1)).to_contain_text("v2 · new goal")
    expect(versions.nth(2)).to_contain_text("v1 · first request")
    turns = goal.locator("li.goal-turn")
    expect(turns).to_have_count(4)
    expect(turns.nth(1)).to_contain_text("continue")
    expect(turns.nth(1).locator(".low-confidence")).to_have_text("low confidence")
    expect(turns.nth(2)).to_contain_text("new goal")
    expect(turns.nth(2).locator(".low-confidence")).to_have_count(0)
    expect(goal.locator(".goal-findings h3")).to_have_text("Goal findings (0)")

    versions.nth(1).get_by_role("link", name="user turn").click()

    highlighted = page.locator(".trace-tree .highlight")
    expect(highlighted).to_have_count(1)
    expect(highlighted).to_contain_text("Switching gears")
    expect(highlighted).to_be_focused()
    assert axe_violations(page, include="section.goal-panel") == []
    goal.scroll_into_view_if_needed()
    screenshot(page, "goals-desktop")


def test_supervision_is_enabled_run_and_paused_by_its_budget_from_the_panel(
    page: Page, served: Served, model: ScriptedModelServer, conversation_id: str
) -> None:
    _open(page, conversation_id)
    panel = page.locator("section.supervision-panel")
    expect(panel.locator(".supervision-no-model")).to_contain_text("No model connection")
    expect(panel.get_by_role("link", name="Add or choose one in Settings")).to_have_attribute(
        "href", "#/settings"
    )
    expect(panel.locator(".supervision-state")).to_contain_text("off (not supervised)")

    _proctor(
        served.home, "models", "add", "scripted", "--base-url", model.url,
        "--model", "scripted-model", "--default",
    )  # fmt: skip
    panel.get_by_role("button", name="Refresh").click()
    expect(panel.locator(".supervision-no-model")).to_have_count(0)
    expect(panel).to_contain_text("Model: scripted")

    panel.get_by_label("Mode").select_option("goal")
    panel.get_by_label("When the run ends").check()
    panel.get_by_role("button", name="Enable supervision").click()

    expect(panel.locator(".supervision-state")).to_contain_text("active")
    expect(panel.locator(".supervision-usage")).to_contain_text(
        "Mode goal; triggers after_reply, run_end"
    )
    expect(panel.get_by_role("button", name="Disable supervision")).to_be_visible()

    _proctor(
        served.home, "supervise", "enable", conversation_id, "--mode", "goal", "--budget-calls", "1"
    )
    panel.get_by_role("button", name="Refresh").click()
    expect(panel.locator(".supervision-usage")).to_contain_text("0 of 1 calls")
    panel.get_by_role("button", name="Run now").click()
    expect(panel.locator(".supervision-note")).to_contain_text("Analysis queued (mode goal)")
    expect(panel.locator(".supervision-last-run")).to_contain_text("ok · goal")
    expect(panel.locator(".budget-paused")).to_contain_text("Supervision paused: budget")
    expect(panel.locator(".supervision-state")).to_contain_text("paused: budget")
    assert len(model.requests) >= 1

    panel.get_by_role("button", name="Run now").click()
    expect(panel.locator(".supervision-note")).to_contain_text("supervision paused: budget")

    panel.get_by_role("button", name="Disable supervision").click()
    expect(panel.locator(".supervision-state")).to_contain_text("disabled")
    expect(panel.get_by_role("button", name="Enable supervision")).to_be_visible()
    assert axe_violations(page, include="section.supervision-panel") == []


def test_remember_this_drafts_a_memory_that_only_confirming_keeps(
    page: Page, served: Served
) -> None:
    _open(page, CLAUDE)
    card = page.locator("article.finding").first
    card.get_by_role("button", name="Remember this").click()
    editor = card.locator("form.memory-editor")
    text = editor.get_by_role("textbox")
    expect(text).to_be_focused()
    text.fill("Always run the full test suite before saying it passes.")
    editor.get_by_role("button", name="Confirm memory").click()
    expect(editor).to_have_count(0)

    listed = json.loads(_proctor(served.home, "memories", "list", "--json"))
    assert [m["text"] for m in listed["memories"]] == [
        "Always run the full test suite before saying it passes."
    ]
    assert listed["candidates"] == []
