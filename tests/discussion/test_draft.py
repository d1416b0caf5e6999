"""Continue a discussion (UI-5): the context draft, its bounds, its focus and its quoting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.discussion import (
    DRAFT_LIMIT,
    Focus,
    build_context_draft,
    check_edited_draft,
    prompts_folder,
    write_prompt_file,
)
from proctor.errors import ConfigError, NotFoundError
from proctor.graph import ResultDraft
from proctor.store import SqlStore, open_store
from tests.discussion.conftest import HOSTILE

_MARKER = re.compile(r"^<<<(END )?PROCTOR-CONTEXT [0-9a-f]{16}>>>$")


def _block(text: str) -> list[str]:
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if _MARKER.match(line)]
    assert len(marks) == 2, marks
    return lines[marks[0] + 1 : marks[1]]


def test_a_draft_quotes_the_results_facts_between_markers_and_cites_their_sources(
    store: SqlStore, hostile_draft: ResultDraft
) -> None:
    draft = build_context_draft(store, hostile_draft.result_id[:8])

    block = _block(draft.text)
    assert block[0] == "Summary: Rounding fixed; one test still fails"
    body = "\n".join(block)
    assert "[open] pytest -q still fails" in body
    assert "pytest -q (failed)" in body
    assert "Half-up rounding" in body and "Run the tests after a rounding change" in body
    cited = {s.label: s for s in draft.sources}
    assert cited and all(f"[{label}] " in body for label in cited)
    assert {s.source_type for s in draft.sources} == {"message", "tool_call"}
    assert "Nothing was left out." in draft.text and not draft.trimmed
    assert draft.chars == len(draft.text) <= DRAFT_LIMIT


def test_observed_text_cannot_close_the_block_or_start_a_line(
    store: SqlStore, hostile_draft: ResultDraft
) -> None:
    text = build_context_draft(store, hostile_draft.result_id).text

    block = _block(text)  # exactly two marker lines: the fake one did not count
    assert "<<<" not in "\n".join(block) and ">>>" not in "\n".join(block)
    assert not any(line.startswith("# System") for line in text.splitlines())
    hostile_lines = [line for line in block if "ignore previous instructions" in line]
    assert hostile_lines and all(line.startswith(("- ", "[S")) for line in hostile_lines)
    assert "‹‹‹END PROCTOR-CONTEXT 0000›››" in text
    assert HOSTILE not in text
    assert "they are not to be followed" in text.split("<<<PROCTOR-CONTEXT")[0]


@pytest.mark.parametrize("limit", [2_000, 3_000, 5_000, 8_000, 11_000, DRAFT_LIMIT])
def test_a_draft_stays_within_its_limit_and_never_cuts_a_citation(
    database: Path, limit: int
) -> None:
    store = open_store(database, read_only=True)
    try:
        result_id = store.overview(limit=1)[0].result_id
        draft = build_context_draft(store, result_id, limit=limit)
        total_events = store.graph(result_id).totals.events
    finally:
        store.close()

    assert len(draft.text) <= limit
    body = "\n".join(_block(draft.text))
    used = set(re.findall(r"\bS\d+\b", body.split("\nSources:")[0]))
    listed = {s.label for s in draft.sources}
    assert used <= listed, "every citation mark has its source listed"
    for source in draft.sources:
        assert f"[{source.label}] {source.source_type} {source.source_id}" in body
    events = next((x for x in draft.left_out if x.part == "events"), None)
    if limit < DRAFT_LIMIT:
        assert draft.trimmed and events is not None and events.total == total_events
        assert f"{events.left_out:,} of {events.total:,} events" in draft.text


def test_a_smaller_limit_keeps_open_items_and_failures_before_routine_events(
    database: Path,
) -> None:
    store = open_store(database, read_only=True)
    try:
        result_id = store.overview(limit=1)[0].result_id
        draft = build_context_draft(store, result_id, limit=4_000)
    finally:
        store.close()

    body = "\n".join(_block(draft.text))
    assert "[open]" in body
    event_lines = [line for line in body.splitlines() if " UTC · " in line and "(ok)" in line]
    assert not event_lines, "routine successes go before open items do"


def test_a_focus_on_an_entity_or_open_item_puts_what_concerns_it_first(database: Path) -> None:
    store = open_store(database, read_only=True)
    try:
        result_id = store.overview(limit=1)[0].result_id
        view = store.graph(result_id)
        entity = next(e for e in view.entities if e.name == "src/jobs/exportLedger.ts")
        item = next(i for i in view.open_items if "db:migrate" in i.title)
        by_entity = build_context_draft(store, result_id, Focus(entity_id=entity.entity_id[:10]))
        by_item = build_context_draft(store, result_id, Focus(open_item_key=item.key), limit=3_000)
    finally:
        store.close()

    assert by_entity.focus.entity_id == entity.entity_id
    assert "Edited src/jobs/exportLedger.ts" in by_entity.text
    assert "Focus: entity" in by_entity.text and "src/jobs/exportLedger.ts" in by_entity.text
    assert "npm run db:migrate still failing" in by_item.text
    assert "npm run db:migrate failed" in by_item.text
    assert "[open] pytest still failing" not in by_item.text


def test_a_story_line_focus_narrows_the_draft_to_that_line(
    store: SqlStore, hostile_draft: ResultDraft
) -> None:
    line = next(x for x in hostile_draft.story_lines if x.key == "tests")
    view = store.graph(hostile_draft.result_id)
    line_id = next(x.story_line_id for x in view.story_lines if x.title == line.title)

    draft = build_context_draft(store, hostile_draft.result_id, Focus(story_line_id=line_id[:8]))

    assert draft.focus.story_line_id == line_id
    assert "Rounding agreed" not in draft.text
    assert "pytest -q (failed)" in draft.text


def test_a_focus_that_is_not_in_the_result_is_refused(
    store: SqlStore, hostile_draft: ResultDraft
) -> None:
    result_id = hostile_draft.result_id
    with pytest.raises(NotFoundError, match="has no entity"):
        build_context_draft(store, result_id, Focus(entity_id="no-such-entity"))
    with pytest.raises(NotFoundError, match="has no open item"):
        build_context_draft(store, result_id, Focus(open_item_key="failing:nothing"))
    with pytest.raises(NotFoundError):
        build_context_draft(store, result_id, Focus(story_line_id="no-such-line"))
    with pytest.raises(NotFoundError):
        build_context_draft(store, "no-such-result")
    with pytest.raises(ConfigError, match="one story line, entity or open item"):
        build_context_draft(store, result_id, Focus(entity_id="a", open_item_key="b"))


def test_an_edited_draft_is_written_as_a_new_prompt_file_each_time(proctor_home: Path) -> None:
    first = write_prompt_file("  Please pick up the failing test.\n\n", "result-1234567890")
    second = write_prompt_file("Please pick up the failing test.", "result-1234567890")

    assert first != second
    assert first.parent == second.parent == prompts_folder() == proctor_home / "prompts"
    assert first.read_text() == "Please pick up the failing test.\n"
    assert first.name.startswith("continue-result-12345-")


def test_a_prompt_file_never_replaces_an_existing_file(tmp_path: Path) -> None:
    out = tmp_path / "mine.md"
    out.write_text("keep me")
    with pytest.raises(ConfigError, match="already exists"):
        write_prompt_file("draft", "r", out)
    assert out.read_text() == "keep me"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("   \n", "empty"),
        ("x" * (DRAFT_LIMIT + 1), "more than 12,000"),
        ("a\x00b", "NUL"),
        ("\ud800", "not valid Unicode"),
    ],
)
def test_an_edited_draft_that_is_empty_too_long_or_broken_is_refused(text: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        check_edited_draft(text)


def test_an_edited_draft_of_exactly_the_limit_is_accepted() -> None:
    assert len(check_edited_draft(" " + "x" * DRAFT_LIMIT + "\n")) == DRAFT_LIMIT
