"""The trace view and sub-agent cards (SPEC UI-3, seed 004) in a real browser: the tree from
the keyboard, failed calls, finding markers and evidence to the character, Markdown without
raw HTML, digested sub-agent cards that lead into the child and back, and a 2,000-message
conversation shown a bounded window at a time.

The store is the UI seed (the examples, whose Claude Code session started an Explore
sub-agent, and the hostile transcript) plus a generated 2,000-message conversation and a
conversation of hostile Markdown, one server for the module (the tests only read, except
the marker test's focus, which writes nothing).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from proctor.ingest import ingest
from proctor.store import open_store
from tests.backends import copy_database
from tests.trace_world import LongTrace, cite, write_jsonl, write_long_trace
from tests.ui.accessibility import assert_accessible
from tests.ui.conftest import PHONE, screenshot
from tests.ui.private_server import serve_home

PARENT = "cc:session:62154fe7-682b-4c07-870b-f97d004574c6"
CHILD = "cc:agent:62154fe7-682b-4c07-870b-f97d004574c6:a1b3ffe2395fb6b6c"
TASK_CALL = "cc:tool:toolu_01vL4XwGBjzGRY7dLErfxQ5G"
LEDGER = "codex:01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
LONG = "pj:trace-long"
HOSTILE_MARKDOWN = (
    "# Report\n\nSee [the docs](https://example.com/docs) and [this](javascript:window.__pwned='md-link') and [that](ftp://example.com/f).\n\n"
    "![pixel](https://example.com/p.png) <img src=x onerror=\"window.__pwned='md-img'\">\n\n"
    "<script>window.__pwned='md-script'</script>\n\n"
    "<div onclick=\"window.__pwned='md-div'\">**bold** and `code`</div>\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nwindow.__pwned = 'fence';\n```\n"
)
ROW_BOUND = 130
"""Rows a window may render: 100 items plus the turns they belong to."""


@pytest.fixture(scope="module")
def long_trace(tmp_path_factory: pytest.TempPathFactory) -> LongTrace:
    folder = tmp_path_factory.mktemp("trace-files")
    return write_long_trace(folder / "long.jsonl")


@pytest.fixture(scope="module")
def server(
    seeded_database: Path, tmp_path_factory: pytest.TempPathFactory, long_trace: LongTrace
) -> Iterator[str]:
    """The UI seed plus the long conversation (a finding cites its late claim) and a
    conversation of hostile Markdown, served for the module."""
    home = tmp_path_factory.mktemp("trace-home")
    copy_database(seeded_database, home / "proctor.db")
    folder = tmp_path_factory.mktemp("trace-inputs")
    write_long_trace(folder / "long.jsonl")
    write_jsonl(
        folder / "markdown.jsonl",
        [
            {
                "type": "conversation",
                "conversation_id": "md",
                "title": "Hostile markdown",
                "project": "trace-lab",
            },
            {
                "type": "message",
                "conversation_id": "md",
                "message_id": "m1",
                "role": "user",
                "kind": "prompt",
                "text": "Render the report.",
            },
            {
                "type": "message",
                "conversation_id": "md",
                "message_id": "m2",
                "role": "assistant",
                "text": HOSTILE_MARKDOWN,
            },
        ],
    )
    store = open_store(home / "proctor.db")
    try:
        ingest(store, [folder / "long.jsonl", folder / "markdown.jsonl"])
        cite(
            store,
            LONG,
            "message",
            f"{LONG}:msg:{long_trace.late_message}",
            title="Success claimed without a passing run",
            severity="high",
            field="text",
            start=len("Verified: "),
            end=len(long_trace.late_claim),
        )
    finally:
        store.close()
    with serve_home(home) as served:
        yield served.url


def _open(page: Page, conversation: str, source: str | None = None) -> None:
    page.goto(f"/#/conversations/{conversation}" + (f"?source={source}" if source else ""))
    expect(page.locator("[data-page=trace][data-ready=true]")).to_be_attached()


def _row(page: Page, source_id: str) -> Any:
    return page.locator(f"#turn-{re.sub(r'[^A-Za-z0-9_-]', '_', source_id)}")


def test_the_trace_groups_turns_and_marks_failed_calls_with_words_and_an_icon(page: Page) -> None:
    _open(page, PARENT)
    tree = page.get_by_role("tree", name="Turns, tool calls and sub-agents")
    turn = tree.get_by_role("treeitem", name=re.compile(r"^Turn 1 — Finance says"))
    expect(turn).to_have_attribute("aria-expanded", "true")
    expect(turn).to_contain_text("16 tool calls")
    expect(turn).to_contain_text("7 failed")
    failed = page.locator(".trace-item.call.failed")
    expect(failed).to_have_count(7)
    bash = _row(page, "cc:tool:toolu_01AP3chrwDqbNpRqMDnddyyq")
    expect(bash.locator(":scope > .trace-line .status")).to_have_text("✗ failed (exit 6)")
    expect(bash.locator(":scope > .trace-line .status [aria-hidden=true]")).to_have_text("✗")
    grep = _row(page, "cc:tool:toolu_011wG2PjK8JrRJ8Z3eurJy5H")
    expect(grep.locator(":scope > .trace-line .status")).to_have_text("✓ ok")
    expect(grep).not_to_have_class(re.compile(r"\bfailed\b"))
    # Model, tokens and durations where the transcript has them; a bar per timed row.
    reply = _row(page, "cc:msg:msg_016yBS57J2M3FRkxCL6gMbXv")
    expect(reply.locator(".model")).to_have_text("claude-opus-4-6")
    expect(reply.locator(".tokens")).to_have_text("26,083 tokens")
    expect(grep.locator(".duration")).to_have_text("96 ms")
    bars = page.locator(".waterfall .bar")
    expect(bars).to_have_count(page.locator("[role=treeitem] > .trace-line").count())
    assert bars.nth(0).evaluate("b => getComputedStyle(b).width") != "0px"
    screenshot(page, "trace-desktop")


def test_the_tree_opens_closes_and_moves_from_the_keyboard(page: Page) -> None:
    _open(page, PARENT)
    turn = page.locator(".trace-turn").first
    first_item = turn.locator("[role=treeitem]").first
    turn.focus()
    page.keyboard.press("ArrowLeft")
    expect(turn).to_have_attribute("aria-expanded", "false")
    expect(first_item).to_be_hidden()
    page.keyboard.press("Enter")
    expect(turn).to_have_attribute("aria-expanded", "true")
    expect(first_item).to_be_visible()
    page.keyboard.press("ArrowRight")  # open already: to the first child
    expect(first_item).to_be_focused()
    expect(first_item).to_have_attribute("tabindex", "0")
    expect(turn).to_have_attribute("tabindex", "-1")
    page.keyboard.press("ArrowDown")
    expect(turn.locator("[role=treeitem]").nth(1)).to_be_focused()
    page.keyboard.press("ArrowLeft")  # a leaf: to its parent
    expect(turn).to_be_focused()
    page.keyboard.press("End")
    expect(page.locator("[role=treeitem]").last).to_be_focused()
    page.keyboard.press("Home")
    expect(turn).to_be_focused()
    # The call that started the sub-agent opens and closes its card the same way.
    task = _row(page, TASK_CALL)
    task.focus()
    page.keyboard.press("ArrowLeft")
    expect(task).to_have_attribute("aria-expanded", "false")
    expect(page.locator("article.subagent-card")).to_be_hidden()
    page.keyboard.press("ArrowRight")
    expect(page.locator("article.subagent-card")).to_be_visible()


def test_a_finding_marker_leads_to_its_card_whose_evidence_marks_the_exact_characters(
    page: Page,
) -> None:
    _open(page, LEDGER)
    findings = page.request.get(f"/api/findings?conversation={LEDGER}").json()["findings"]
    claim = next(f for f in findings if f["title"].startswith("Claim that the tests pass"))
    evidence = claim["evidence"][0]
    source = page.request.get(
        f"/api/conversations/{LEDGER}/transcript?around={evidence['source_id']}"
    ).json()
    text = next(i for i in source["items"] if i["source_id"] == evidence["source_id"])["text"]
    expected = text[evidence["start"] : evidence["end"]]

    row = _row(page, evidence["source_id"])
    marker = row.locator(f"[data-finding-marker='{claim['finding_id']}']")
    expect(marker).to_have_accessible_name("high finding cites this: go to it")
    marker.click()
    card = page.locator(f"article[data-finding='{claim['finding_id']}']")
    expect(card).to_be_focused()

    link = card.get_by_role("link").first
    link.click()
    expect(row).to_have_class(re.compile(r"\bhighlight\b"))
    expect(row).to_be_focused()
    mark = row.locator("mark")
    expect(mark).to_have_text(expected)
    # The marks are on the raw text: the message shows its source view.
    expect(row.locator("pre[data-field=text]")).to_be_visible()
    expect(row.get_by_role("button", name="Source")).to_have_attribute("aria-pressed", "true")
    row.get_by_role("button", name="Back to the finding").click()
    expect(link).to_be_focused()


def test_markdown_renders_as_elements_while_raw_html_and_unsafe_links_stay_inert(
    page: Page,
) -> None:
    page.goto("/#/conversations")
    page.get_by_role("link", name="Hostile markdown").click()
    expect(page.locator("[data-page=trace][data-ready=true]")).to_be_attached()
    body = page.locator(".trace-item.role-assistant .md")
    expect(body.locator("strong")).to_have_text("bold")
    expect(body.locator("table td").first).to_have_text("1")
    expect(body.locator("p.md-h")).to_have_text("Report")  # no heading inside the trace
    safe = body.get_by_role("link", name="the docs")
    expect(safe).to_have_attribute("href", "https://example.com/docs")
    expect(safe).to_have_attribute("rel", "noopener noreferrer")
    expect(body.locator("a[href^='javascript']")).to_have_count(0)
    expect(body.get_by_role("link", name="this")).to_have_count(0)
    expect(body).to_contain_text("[this](javascript:window.__pwned='md-link')")
    expect(body.locator(".md-unsafe-link")).to_have_text("that")  # not http(s) or mailto
    expect(body).to_contain_text("<script>window.__pwned='md-script'</script>")
    expect(body).to_contain_text("<img src=x onerror=")
    expect(body.locator("pre.md-code code")).to_have_text("window.__pwned = 'fence';")
    for selector in ("script", "img", "iframe", "div[onclick]", "[onerror]"):
        assert page.locator(f"main {selector}").count() == 0, selector
    # The hostile transcript of the UI seed stays text too.
    page.goto("/#/conversations")
    page.get_by_role("link", name=re.compile("Render me")).click()
    expect(page.locator("[data-page=trace][data-ready=true]")).to_be_attached()
    expect(page.locator("#turns")).to_contain_text("<script>window.__pwned='script'</script>")
    for selector in ("main script", "main img", "main iframe", "main svg", "main b"):
        assert page.locator(selector).count() == 0, selector
    assert page.evaluate("() => window.__pwned") is None


def test_a_sub_agent_card_is_digested_expands_in_place_and_leads_to_the_child_and_back(
    page: Page,
) -> None:
    _open(page, PARENT)
    card = page.locator("article.subagent-card")
    expect(card).to_have_class(re.compile(r"\bdigested\b"))
    expect(card).to_contain_text("Sub-agent · Explore")
    expect(card).to_contain_text("completed")
    expect(card).to_contain_text("16.7 s · 4 tool calls · 0 findings")
    expect(card.locator(".subagent-digest")).to_contain_text(
        "digested · Map money rounding call sites"
    )
    expand = card.get_by_role("button", name="Expand")
    expect(expand).to_have_attribute("aria-expanded", "false")
    expand.press("Enter")
    toggle = card.get_by_role("button", name="Digest")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(toggle).to_be_focused()
    expect(card).to_contain_text("Task given")
    expect(card.locator(".subagent-summary table")).to_be_visible()
    expect(card.locator(".subagent-summary")).to_contain_text("no quantize or Decimal anywhere")
    card.scroll_into_view_if_needed()
    screenshot(page, "subagent-card-desktop")
    assert_accessible(page, "the trace with an expanded sub-agent card")

    card.get_by_role("link", name="Open sub-agent trace").click()
    expect(page).to_have_url(re.compile(re.escape(f"#/conversations/{quote(CHILD, safe='')}")))
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    expect(crumbs.locator("[aria-current=page]")).to_have_text("Sub-agent · Explore")
    expect(page.locator(".subagent-task")).to_contain_text(
        "Task given: Map money rounding call sites"
    )
    expect(page.get_by_role("heading", level=1)).to_have_text("Map money rounding call sites")
    assert_accessible(page, "a sub-agent's trace")

    crumbs.get_by_role("link", name=re.compile("^Finance says")).click()
    task = _row(page, TASK_CALL)
    expect(task).to_have_class(re.compile(r"\bhighlight\b"))
    expect(task).to_be_focused()


def test_a_2000_message_trace_renders_a_bounded_window_and_reaches_a_late_evidence_target(
    page: Page, long_trace: LongTrace
) -> None:
    started = time.perf_counter()
    _open(page, LONG)
    ready = time.perf_counter() - started
    total = long_trace.messages + long_trace.tool_calls
    expect(page.locator(".window-status")).to_contain_text(f"Items 1–100 of {total:,}")
    rows = page.locator("[role=treeitem]")
    assert 100 < rows.count() <= ROW_BOUND, rows.count()

    card = page.locator("article.finding", has_text="Success claimed without a passing run")
    card.get_by_role("link").first.click()
    late = _row(page, f"{LONG}:msg:{long_trace.late_message}")
    expect(late).to_have_class(re.compile(r"\bhighlight\b"))
    expect(late.locator("mark")).to_have_text("every export test passes now.")
    expect(late).to_be_in_viewport()
    expect(late).to_be_focused()
    assert rows.count() <= ROW_BOUND, rows.count()
    expect(page.locator(".window-status")).to_contain_text(f"of {total:,}")
    expect(page.get_by_role("button", name="Later items")).to_have_count(0)
    page.get_by_role("button", name="Earlier items").click()
    expect(rows.first).to_be_focused()
    assert rows.count() <= ROW_BOUND, rows.count()
    print(f"2,000-message trace ready in {ready:.2f} s (navigation to data-ready)")


def test_the_trace_is_usable_at_375_pixels(page: Page) -> None:
    page.set_viewport_size(PHONE)
    _open(page, PARENT)
    expect(page.get_by_role("tree")).to_be_visible()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways: {width}px"
    page.evaluate(
        "() => document.querySelector('section.trace').scrollIntoView({ block: 'start' })"
    )
    screenshot(page, "trace-375")
