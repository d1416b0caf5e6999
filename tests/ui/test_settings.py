"""The settings page in a real browser: the app switch, connections and the supervisor's
model, the pool limits, live supervision sessions (SPEC UI-3, HB-1, MOD-1, MOD-2, MOD-4)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Locator, Page, expect

from tests.backends import copy_database, database_env
from tests.ui.cli import run_commands
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import serve_home

KEY_VARIABLE = "PROCTOR_UI_SETTINGS_KEY"
KEY_VALUE = "sk-ui-settings-0123456789-never-shown"
CODEX = "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
CLAUDE = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"


@pytest.fixture(scope="module")
def server(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The seeded store plus three connections (added with the CLI) and two supervised
    conversations, served with the key variable of one connection set."""
    home = tmp_path_factory.mktemp("ui-settings-home")
    copy_database(seeded_database, home / "proctor.db")
    env = {"PROCTOR_HOME": str(home), **database_env(home), "PATH": os.environ.get("PATH", "")}
    run_commands(
        env,
        [
            [
                "models",
                "add",
                "work",
                "--model",
                "gpt-test",
                "--api-key-env",
                KEY_VARIABLE,
                "--default",
            ],
            [
                "models",
                "add",
                "box",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "llama-test",
            ],
            [
                "models",
                "add",
                "vectors",
                "--model",
                "embed-test",
                "--kind",
                "embedding",
                "--api-key-env",
                "PROCTOR_UI_UNSET_KEY",
            ],
            ["supervise", "enable", CODEX],
            ["supervise", "enable", CLAUDE, "--mode", "risk", "--budget-calls", "12"],
        ],
    )
    with serve_home(home, {KEY_VARIABLE: KEY_VALUE}) as served:
        yield served.url


def _open_settings(page: Page) -> None:
    page.goto("/#/settings")
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    expect(page.locator("#pool-concurrency")).to_have_value(re.compile(r"\d"))
    expect(page.locator("article.session").first).to_be_visible()


def _tab_to(page: Page, target: Locator, presses: int = 40) -> None:
    """Press Tab until ``target`` has the focus (keyboard only, as a user would)."""
    for _ in range(presses):
        if target.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    expect(target).to_be_focused()


def _api(page: Page, path: str) -> dict[str, object]:
    response = page.request.get(f"/api{path}")
    assert response.ok, response.text()
    data: dict[str, object] = response.json()
    return data


def test_connections_show_where_their_key_lives_never_the_key(page: Page) -> None:
    _open_settings(page)
    work = page.locator("article.connection[data-connection='work']")
    expect(work).to_contain_text("openai")
    expect(work).to_contain_text("gpt-test")
    expect(work).to_contain_text(f"${KEY_VARIABLE}")
    expect(work.locator(".badge.key-set")).to_have_text("set")
    expect(work).to_contain_text("default")
    expect(work).to_contain_text("supervisor")
    box = page.locator("article.connection[data-connection='box']")
    expect(box).to_contain_text("127.0.0.1:9/v1")
    expect(box).to_contain_text("none needed")
    vectors = page.locator("article.connection[data-connection='vectors']")
    expect(vectors.locator(".badge.key-missing")).to_have_text("not set")
    expect(vectors).to_contain_text("embedding")
    assert KEY_VALUE not in page.content()
    # An embedding model is not offered to the supervisor.
    options = page.locator("#supervisor-model option")
    expect(options).to_have_text(
        ["Follow the default (work)", "box · openai llama-test", "work · openai gpt-test"]
    )
    screenshot(page, "settings-desktop", full_page=True)


def test_the_app_switch_toggles_from_the_keyboard_and_the_change_is_stored(page: Page) -> None:
    _open_settings(page)
    switch = page.get_by_role("switch", name="Supervisor app")
    expect(switch).to_have_attribute("aria-checked", "true")
    _tab_to(page, switch)
    page.keyboard.press("Space")
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(page.locator("#app-meaning")).to_contain_text("no heartbeat plan or manual review runs")
    assert _api(page, "/app") == {"enabled": False}
    page.reload()
    switch = page.get_by_role("switch", name="Supervisor app")
    expect(switch).to_have_attribute("aria-checked", "false")
    switch.focus()
    page.keyboard.press("Enter")
    expect(switch).to_have_attribute("aria-checked", "true")
    assert _api(page, "/app") == {"enabled": True}


def test_choosing_the_supervisor_model_persists(page: Page) -> None:
    _open_settings(page)
    select = page.locator("#supervisor-model")
    _tab_to(page, select)
    select.select_option("box")
    page.keyboard.press("Tab")
    save = page.get_by_role("button", name="Save model choice")
    expect(save).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#supervisor-state")).to_contain_text("pinned to box")
    assert _api(page, "/supervisor/model")["pinned"] == "box"
    page.reload()
    expect(page.locator("#supervisor-model")).to_have_value("box")
    expect(page.locator("article.connection[data-connection='box']")).to_contain_text("supervisor")
    # Back to following the default.
    page.locator("#supervisor-model").select_option("")
    page.get_by_role("button", name="Save model choice").click()
    expect(page.locator("#supervisor-state")).to_contain_text("follows the default: work")
    assert _api(page, "/supervisor/model")["pinned"] is None


def test_an_invalid_pool_value_shows_the_api_sentence_and_nothing_is_stored(page: Page) -> None:
    _open_settings(page)
    before = _api(page, "/model-pool")
    concurrency = page.locator("#pool-concurrency")
    concurrency.fill("9")
    page.locator("#pool-stage_timeout_s").fill("90")
    page.get_by_role("button", name="Save pool limits").click()
    error = page.locator("#pool-concurrency-error")
    expect(error).to_have_text(
        "Concurrency must be a whole number from 1 to 4 (calls at once), not 9."
    )
    expect(concurrency).to_have_attribute("aria-invalid", "true")
    expect(concurrency).to_be_focused()
    expect(page.locator("#pool-stage_timeout_s-error")).to_be_hidden()
    assert _api(page, "/model-pool") == before
    # Corrected, the whole form is saved at once.
    concurrency.fill("2")
    page.keyboard.press("Enter")
    expect(error).to_be_hidden()
    expect(concurrency).not_to_have_attribute("aria-invalid", "true")
    expected = {**before, "concurrency": 2, "stage_timeout_s": 90.0}
    expect(page.locator("#toast")).to_contain_text("Pool limits saved")
    assert _api(page, "/model-pool") == expected
    page.reload()
    expect(page.locator("#pool-concurrency")).to_have_value("2")
    expect(page.locator("#pool-stage_timeout_s")).to_have_value("90")


def test_leaving_with_unsaved_pool_changes_asks_first(page: Page) -> None:
    _open_settings(page)
    page.locator("#pool-capacity_kib").fill("2048")
    asked: list[str] = []

    def decline(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", decline)
    with page.expect_event("dialog"):  # the question comes after the address changed
        page.get_by_role("link", name="Conversations").click()
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    expect(page.locator("#pool-capacity_kib")).to_have_value("2048")
    assert asked and "unsaved changes" in asked[0]
    # Undone, it leaves without asking.
    page.get_by_role("button", name="Undo changes").click()
    page.get_by_role("link", name="Conversations").click()
    expect(page.get_by_role("heading", name="Conversations", level=1)).to_be_visible()


def test_a_live_session_is_switched_off_and_on_keeping_its_settings(page: Page) -> None:
    _open_settings(page)
    row = page.locator(f"article.session[data-target='{CLAUDE}']")
    expect(row).to_contain_text("risk")
    expect(row).to_contain_text("0 of 12 calls")
    switch = row.get_by_role("switch", name=f"Supervise {CLAUDE}")
    expect(switch).to_have_attribute("aria-checked", "true")
    _tab_to(page, switch, presses=80)
    page.keyboard.press("Space")
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(row.locator(".badge.state-disabled")).to_have_text("disabled")
    stored = _api(page, f"/sessions/{CLAUDE}")
    assert stored["state"] == "disabled"
    page.keyboard.press("Space")
    expect(switch).to_have_attribute("aria-checked", "true")
    session = _api(page, f"/sessions/{CLAUDE}")["session"]
    assert isinstance(session, dict)
    assert (
        session["enabled"] is True and session["mode"] == "risk" and session["budget_calls"] == 12
    )
    row.get_by_role("link", name=CLAUDE).click()
    expect(page.get_by_role("heading", name=re.compile("^Findings"))).to_be_visible()


def test_the_settings_page_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    _open_settings(page)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    expect(page.get_by_role("switch", name="Supervisor app")).to_be_visible()
    expect(page.get_by_role("button", name="Save pool limits")).to_be_visible()
    screenshot(page, "settings-375", full_page=True)
