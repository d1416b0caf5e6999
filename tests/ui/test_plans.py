"""Heartbeat plans (SPEC UI-3, HB-2, HB-3): the list with its switches and the draft editor,
in a real browser."""

from __future__ import annotations

import re
from typing import Any

import httpx
from playwright.sync_api import Dialog, Page, expect

from tests.ui.conftest import PHONE, screenshot


def _create(server: str, **fields: Any) -> dict[str, Any]:
    body = {"recurrence": "daily", "time": "07:00", "timezone": "UTC", **fields}
    response = httpx.post(timeout=30, url=f"{server}/api/plans", json=body)
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def _plan(server: str, ref: str) -> httpx.Response:
    return httpx.get(timeout=30, url=f"{server}/api/plans/{ref}")


def _names(server: str) -> list[str]:
    return [p["name"] for p in httpx.get(timeout=30, url=f"{server}/api/plans").json()["plans"]]


def test_a_new_plan_is_a_draft_until_saved(page: Page, server: str) -> None:
    page.goto("/#/plans")
    page.get_by_role("link", name="New plan").click()
    expect(page.get_by_role("heading", name="New plan")).to_be_visible()
    page.get_by_label("Name").fill("weekday mornings")
    page.get_by_label("Project").select_option("ledger-sync")
    page.get_by_label("Runs").select_option("weekly")
    page.get_by_role("checkbox", name="Monday").check()
    page.get_by_role("checkbox", name="Thursday").check()
    page.get_by_label("Time of day").fill("08:30")
    page.get_by_label("Time zone").fill("Europe/Berlin")
    page.get_by_label("After the review").select_option("memory_only")
    page.get_by_label("Only the last … hours").fill("12")
    screenshot(page, "plan-editor-desktop")
    assert "weekday mornings" not in _names(server), "something was sent before Save"
    page.get_by_role("button", name="Save plan").click()
    expect(page).to_have_url(re.compile(r"#/plans$"))
    card = page.locator("article.plan", has_text="weekday mornings")
    expect(card).to_contain_text("weekly mon,thu 08:30 (Europe/Berlin) · ledger-sync · memory only")
    saved = _plan(server, "weekday mornings").json()
    assert (saved["recurrence"], saved["weekdays"], saved["time_of_day"]) == (
        "weekly",
        [0, 3],
        "08:30",
    )
    assert (saved["window_hours"], saved["intervention"], saved["enabled"]) == (
        12,
        "memory_only",
        True,
    )


def test_an_invalid_plan_is_refused_with_the_apis_sentence_next_to_its_fields(
    page: Page, server: str
) -> None:
    page.goto("/#/plans/new")
    page.get_by_label("Name").fill("on mars")
    page.get_by_label("Runs").select_option("weekly")
    page.get_by_label("Time zone").fill("Mars/Base")
    page.get_by_role("button", name="Save plan").click()
    expect(page.locator("#plan-problem [role=alert]")).to_contain_text("invalid plan")
    timezone_error = page.locator("#plan-timezone-error")
    expect(timezone_error).to_contain_text("'Mars/Base' is not an IANA timezone")
    expect(page.get_by_label("Time zone")).to_have_attribute("aria-invalid", "true")
    assert "on mars" not in _names(server)
    # The next problem is shown next to its field; the fixed field's message goes.
    page.get_by_label("Time zone").fill("UTC")
    page.get_by_role("button", name="Save plan").click()
    expect(page.locator("#plan-weekdays-error")).to_contain_text("at least one weekday")
    expect(timezone_error).to_be_hidden()
    expect(page.get_by_label("Time zone")).not_to_have_attribute("aria-invalid", "true")
    assert "on mars" not in _names(server)
    page.get_by_role("checkbox", name="Friday").check()
    page.get_by_role("button", name="Save plan").click()
    expect(page).to_have_url(re.compile(r"#/plans$"))
    assert "on mars" in _names(server)


def test_the_switch_turns_a_plan_off_and_on_from_the_keyboard(page: Page, server: str) -> None:
    plan = _create(server, name="switchable")
    page.goto("/#/plans")
    switch = page.get_by_role("switch", name="Plan switchable enabled")
    expect(switch).to_have_attribute("aria-checked", "true")
    switch.focus()
    page.keyboard.press(" ")
    expect(switch).to_have_attribute("aria-checked", "false")
    expect(switch).to_be_focused()
    assert _plan(server, plan["plan_id"]).json()["enabled"] is False
    page.keyboard.press("Enter")
    expect(switch).to_have_attribute("aria-checked", "true")
    turned_on = _plan(server, plan["plan_id"]).json()
    assert turned_on["enabled"] is True and turned_on["next_run_at"]
    screenshot(page, "plans-desktop")


def test_leaving_with_unsaved_changes_asks_and_saves_nothing(page: Page, server: str) -> None:
    plan = _create(server, name="guarded", time="06:45")
    asked: list[str] = []
    answer = {"leave": False}

    def respond(dialog: Dialog) -> None:
        asked.append(dialog.message)
        if answer["leave"]:
            dialog.accept()
        else:
            dialog.dismiss()

    page.on("dialog", respond)
    editor = f"#/plans/{plan['plan_id']}"
    # Without changes, leaving asks nothing.
    page.goto(f"/{editor}")
    expect(page.get_by_role("heading", name="guarded")).to_be_visible()
    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    assert asked == []
    # With a change, leaving asks; staying keeps the edit.
    page.goto(f"/{editor}")
    page.get_by_label("Time of day").fill("10:15")
    with page.expect_event("dialog"):  # the question comes after the address changed
        page.get_by_role("link", name="Activity").click()
    expect(page).to_have_url(re.compile(re.escape(editor) + "$"))
    assert asked == ["You have unsaved changes. Leave without saving?"]
    expect(page.get_by_label("Time of day")).to_have_value("10:15")
    expect(page.get_by_role("heading", name="guarded")).to_be_visible()
    # Leaving anyway discards the draft.
    answer["leave"] = True
    with page.expect_event("dialog"):
        page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    assert len(asked) == 2
    assert _plan(server, plan["plan_id"]).json()["time_of_day"] == "06:45"


def test_saving_an_edit_sends_the_change_and_leaves_without_asking(page: Page, server: str) -> None:
    plan = _create(server, name="editable", window_hours=6)
    asked: list[str] = []

    def refuse(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", refuse)
    page.goto(f"/#/plans/{plan['plan_id']}")
    page.get_by_label("Only the last … hours").fill("")
    page.get_by_label("Project").select_option("invoice-service")
    page.get_by_role("switch", name="Enabled").click()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page).to_have_url(re.compile(r"#/plans$"))
    assert asked == []
    saved = _plan(server, plan["plan_id"]).json()
    assert (saved["window_hours"], saved["project_name"], saved["enabled"]) == (
        None,
        "invoice-service",
        False,
    )
    assert (saved["name"], saved["time_of_day"]) == ("editable", "07:00")


def test_delete_asks_for_confirmation_first(page: Page, server: str) -> None:
    plan = _create(server, name="doomed")
    page.goto(f"/#/plans/{plan['plan_id']}")
    page.get_by_role("button", name="Delete…").click()
    question = page.get_by_role("alertdialog")
    expect(question).to_contain_text("Delete plan “doomed” and its heartbeat history?")
    keep = question.get_by_role("button", name="Keep it")
    expect(keep).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alertdialog")).to_have_count(0)
    assert _plan(server, plan["plan_id"]).status_code == 200
    page.get_by_role("button", name="Delete…").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Delete plan").click()
    expect(page).to_have_url(re.compile(r"#/plans$"))
    expect(page.locator("article.plan", has_text="doomed")).to_have_count(0)
    assert _plan(server, plan["plan_id"]).status_code == 404


def test_the_plans_pages_are_usable_at_375_pixels(page: Page, server: str) -> None:
    plan = _create(server, name="small screen", recurrence="weekly", weekdays=["tue"])
    page.set_viewport_size(PHONE)
    page.goto("/#/plans")
    expect(page.locator("article.plan").first).to_be_visible()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the list scrolls sideways: {width}px"
    screenshot(page, "plans-375")
    page.goto(f"/#/plans/{plan['plan_id']}")
    expect(page.get_by_role("checkbox", name="Tuesday")).to_be_checked()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the editor scrolls sideways: {width}px"
    screenshot(page, "plan-editor-375")
