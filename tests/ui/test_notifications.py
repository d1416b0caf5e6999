"""The notifications badge and panel, live, in a real browser (SPEC SUP-8).

``proctor ingest`` and ``proctor check``, in another process (each as a user's terminal
would run it, one after the other: ``tests/ui/cli.py``), store a transcript whose agent
wiped a system folder; the badge in the page already open counts it without a reload, the
panel lists it, its link leads to the finding on its conversation's page, and marking read
clears the badge.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from tests.backends import database_env
from tests.ui.accessibility import assert_accessible
from tests.ui.cli import run_commands
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import Served


def _transcript(folder: Path, name: str, command: str) -> Path:
    """A Proctor JSONL transcript whose agent runs ``command`` in a shell."""
    conversation = f"wipe-{name}"
    lines = [
        {"type": "header", "format": "proctor-jsonl", "version": 1, "producer": "ui tests"},
        {
            "type": "conversation",
            "conversation_id": conversation,
            "title": f"Free disk space ({name})",
            "project": "ops-lab",
            "started_at": "2026-11-21T09:00:00Z",
        },
        {
            "type": "message",
            "conversation_id": conversation,
            "message_id": "m1",
            "role": "user",
            "text": "The disk is full, free some space.",
            "created_at": "2026-11-21T09:00:01Z",
        },
        {
            "type": "message",
            "conversation_id": conversation,
            "message_id": "m2",
            "role": "assistant",
            "text": "Removing the old data.",
            "created_at": "2026-11-21T09:00:02Z",
        },
        {
            "type": "tool_call",
            "conversation_id": conversation,
            "call_id": "c1",
            "message_id": "m2",
            "name": "Bash",
            "arguments": {"command": command},
            "created_at": "2026-11-21T09:00:03Z",
        },
    ]
    path = folder / f"{conversation}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _proctor(served: Served, *commands: list[str]) -> None:
    """Run ``commands`` (``proctor``'s arguments) in turn in one other process: one
    interpreter start and CLI import for them all (about a second of CPU each)."""
    env = {
        **os.environ,
        "PROCTOR_HOME": str(served.home),
        **database_env(served.home),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
    }
    run_commands(env, commands)


@pytest.fixture(scope="module")
def served(served_copy: Served) -> Served:
    return served_copy


@pytest.fixture(scope="module")
def server(served: Served) -> str:
    return served.url


def _unread(page: Page) -> int:
    answer = page.request.get("/api/notifications", headers={"X-Proctor-Client": "tests"})
    return int(answer.json()["unread"])


def test_a_new_finding_stored_by_another_process_reaches_the_badge_without_a_reload(
    page: Page, served: Served, tmp_path: Path
) -> None:
    page.goto("/#/conversations")
    badge = page.locator("#notifications-toggle .notif-count")
    before = _unread(page)
    expect(badge).to_have_text(str(before))
    page.evaluate("window.__sameDocument = true")

    wipe = _transcript(tmp_path, "db", "rm -rf /var/lib/postgresql/data")
    _proctor(served, ["ingest", str(wipe)], ["check", "pj:wipe-db"])

    expect(badge).to_have_text(str(before + 1))
    assert page.evaluate("window.__sameDocument") is True, "the page was reloaded"
    expect(page.locator("#notifications-live")).to_have_text(
        re.compile(r"^New notification: Destructive command: rm -r")
    )

    toggle = page.locator("#notifications-toggle")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    panel = page.get_by_role("region", name="Notifications")
    item = panel.locator("li.notif-item").first
    expect(item).to_contain_text("Destructive command: rm -r of the system folder")
    expect(item).to_contain_text("ops-lab")
    screenshot(page, "notifications-panel")
    assert_accessible(page, "notifications panel open", include="#notifications")

    item.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"#/conversations/pj%3Awipe-db\?finding=[0-9a-f]{32}$"))
    expect(page.get_by_role("heading", name=re.compile("Free disk space"))).to_be_visible()
    # Following the link read that one notification.
    expect(badge).to_have_text(str(before))
    assert page.evaluate("window.__sameDocument") is True

    toggle.click()
    panel.get_by_role("button", name="Mark all read").click()
    expect(badge).to_be_hidden()
    expect(toggle).to_have_accessible_name("Notifications")
    assert _unread(page) == 0


def test_the_panel_works_from_the_keyboard_and_on_a_phone(page: Page) -> None:
    page.set_viewport_size(PHONE)
    page.goto("/#/conversations")
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
    toggle = page.locator("#notifications-toggle")
    toggle.focus()
    page.keyboard.press("Enter")
    panel = page.get_by_role("region", name="Notifications")
    expect(panel).to_be_visible()
    # Focus moved into the panel; Escape closes it and gives focus back to the button.
    expect(panel.locator(":focus")).to_have_count(1)
    box = panel.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    screenshot(page, "notifications-panel-phone")
    assert_accessible(page, "notifications panel at 375 px", include="#notifications")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(toggle).to_be_focused()
    expect(toggle).to_have_attribute("aria-expanded", "false")


def _notification(key: str, title: str, *, unread: bool = True) -> dict[str, object]:
    return {
        "id": key,
        "link": f"#/conversations/pj%3A{key}",
        "title": title,
        "severity": "high",
        "unread": unread,
        "project": "ops-lab",
        "conversation_title": f"Conversation {key}",
        "conversation_id": f"pj:{key}",
        "created_at": "2026-11-21T09:00:03Z",
    }


def test_the_keyboard_focus_stays_on_its_notification_when_the_list_is_redrawn(
    page: Page,
) -> None:
    """The panel's list is redrawn by each poll that brings a change and by Mark read: the
    focus stays on the same notification's control, and after Mark read it moves to the
    next one still unread (the answers are the browser's: this test serves them itself, so
    it decides when the list changes)."""
    items = [_notification(key, f"Finding {key}") for key in ("aa", "bb", "cc")]
    version = [0]

    def answer(route: Route) -> None:
        if route.request.method == "POST":  # mark read: {"ids": [...]}
            ids = set(json.loads(route.request.post_data or "{}").get("ids") or [])
            for item in items:
                item["unread"] = item["unread"] and item["id"] not in ids
            version[0] += 1
            route.fulfill(json={"read": sorted(ids)})
            return
        unread = sum(1 for item in items if item["unread"])
        route.fulfill(
            json={"items": items, "total": len(items), "unread": unread},
            headers={"ETag": f'"v{version[0]}"'},
        )

    page.route(re.compile(r".*/api/notifications(/read)?(\?.*)?$"), answer)
    page.goto("/#/conversations")
    toggle = page.locator("#notifications-toggle")
    toggle.click()
    panel = page.get_by_role("region", name="Notifications")
    expect(panel.locator("li.notif-item")).to_have_count(3)

    panel.get_by_role("button", name="Mark read: Finding aa").focus()
    page.keyboard.press("Enter")
    expect(panel.get_by_role("button", name="Mark read: Finding aa")).to_have_count(0)
    expect(panel.get_by_role("button", name="Mark read: Finding bb")).to_be_focused()

    panel.get_by_role("link", name="Finding cc").focus()
    items.insert(0, _notification("dd", "Finding dd"))  # a new one arrives by the next poll
    version[0] += 1
    expect(panel.locator("li.notif-item")).to_have_count(4, timeout=15_000)
    expect(panel.get_by_role("link", name="Finding cc")).to_be_focused()
