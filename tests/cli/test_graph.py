"""``proctor graph`` through the command line: show, list, edits, needs-review (REV-4, REV-8)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.graph import ResultDraft
from proctor.store import open_store
from tests.store.graph_drafts import add_conversation, add_run, sample_draft


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def publish(run_id: str, **changes: object) -> ResultDraft:
    """Publish the sample draft into $PROCTOR_HOME's database for a new run."""
    store = open_store()
    try:
        project_id = add_conversation(store)
        add_run(store, run_id, project_id)
        draft = dataclasses.replace(sample_draft(run_id, project_id), **changes)
        store.publish_result(draft, "completed")
        return draft
    finally:
        store.close()


@pytest.fixture
def draft(proctor_home: Path) -> ResultDraft:
    return publish("run-1")


def test_show_prints_the_latest_result_as_a_timeline_by_story_line(draft: ResultDraft) -> None:
    result = run("graph", "show")

    assert result.exit_code == 0, result.output
    out = result.output
    assert f"Result {draft.result_id[:12]}" in out and "the latest result" in out
    assert "semantic layer skipped: no model connection" in out
    assert "Coverage: 3 of 3 sources read · complete" in out
    assert out.index("Story line: Fix rounding") < out.index("Rounding agreed")
    assert out.index("Rounding agreed") < out.index("Sub-thread: Test runs")
    assert "pytest -q  failed" in out
    assert "pytest -q —tests→ src/app.py" in out
    assert "● pytest -q still fails" in out


def test_show_json_holds_the_graph_and_its_cited_sources(draft: ResultDraft) -> None:
    result = run("graph", "show", draft.result_id[:8], "--json")

    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["result"]["result_id"] == draft.result_id
    assert data["result"]["scope_label"] == "invoice-service"
    assert {e["name"] for e in data["entities"]} == {"src/app.py", "pytest -q", "Half-up rounding"}
    assert {s["source_id"] for s in data["sources"]} == {
        "test:conv-1:m0",
        "test:conv-1:m1",
        "test:conv-1:call-1",
    }


def test_show_narrowed_to_a_story_line_shows_only_its_events(draft: ResultDraft) -> None:
    store = open_store()
    try:
        sub = next(s for s in store.graph(draft.result_id).story_lines if s.title == "Test runs")
    finally:
        store.close()

    result = run("graph", "show", draft.result_id, "--story-line", sub.story_line_id[:10])

    assert result.exit_code == 0, result.output
    assert "Rounding agreed" not in result.output and "Sub-thread: Test runs" not in result.output
    assert "Story line: Test runs" in result.output


def test_an_unknown_result_or_story_line_exits_2_without_a_traceback(draft: ResultDraft) -> None:
    unknown = run("graph", "show", "no-such-result")
    assert unknown.exit_code == 2
    assert "no result 'no-such-result'" in unknown.output and "Traceback" not in unknown.output
    line = run("graph", "show", draft.result_id, "--story-line", "nope")
    assert line.exit_code == 2 and "has no story line 'nope'" in line.output


def test_show_without_any_result_says_how_to_make_one(proctor_home: Path) -> None:
    open_store().close()
    result = run("graph", "show")
    assert result.exit_code == 0
    assert "No results yet. Run `proctor review run`" in result.output
    assert "No results yet" in run("graph", "list").output


def test_list_shows_results_newest_first(draft: ResultDraft) -> None:
    second = publish("run-2", summary="Second review")

    listed = run("graph", "list")
    assert listed.exit_code == 0, listed.output
    assert listed.output.index(second.result_id[:12]) < listed.output.index(draft.result_id[:12])
    data = json.loads(run("graph", "list", "--target", "invoice-service", "--json").output)
    assert [r["summary"] for r in data] == ["Second review", draft.summary]


def test_edits_by_prefix_survive_a_later_review_and_differences_need_review(
    draft: ResultDraft,
) -> None:
    file_id = draft.entities[0].entity_id
    relation = next(r for r in draft.relations if r.type == "tests")
    store = open_store()
    try:
        relation_id = next(
            r.relation_id for r in store.graph(draft.result_id).relations if r.type == relation.type
        )
    finally:
        store.close()

    revised = run("graph", "revise", file_id[:10], "--name", "app.py")
    assert revised.exit_code == 0, revised.output
    assert f"entity {file_id[:12]} → revised: app.py" in revised.output
    removed = run("graph", "remove", relation_id[:10], "--type", "relation")
    assert "→ revoked" in removed.output
    assert run("graph", "confirm", draft.entities[1].entity_id[:10]).exit_code == 0
    wrong = run("graph", "revise", relation_id[:10], "--name", "x")
    assert wrong.exit_code == 2 and "a relation has no name" in wrong.output

    later = publish("run-2")

    shown = run("graph", "show", later.result_id).output
    assert "app.py  revised" in shown and "—tests→" not in shown
    review = run("graph", "needs-review")
    assert review.exit_code == 0
    assert "name: 'app.py' → 'src/app.py'" in review.output and "#1" in review.output
    assert run("graph", "dismiss", "1").exit_code == 0
    assert "Nothing needs review." in run("graph", "needs-review").output
    assert "dismissed" in run("graph", "needs-review", "--all").output


def test_observed_text_is_printed_literally(proctor_home: Path) -> None:
    draft = publish("run-1", summary="[bold red]not markup[/bold red]")
    result = run("graph", "show", draft.result_id)
    assert "[bold red]not markup[/bold red]" in result.output


def test_show_says_what_a_limit_left_out_and_json_carries_the_totals(draft: ResultDraft) -> None:
    shown = run("graph", "show", draft.result_id, "--limit", "1")

    assert shown.exit_code == 0, shown.output
    out = shown.output
    assert "Showing 1 of 2 events (the newest); use --story-line, or --limit/--offset" in out
    assert "pytest -q  failed" in out and "Rounding agreed" not in out
    assert "Story line: Fix rounding  (2 events, 1 shown)" in out
    assert "Entities (2 of 3)" in out

    data = json.loads(
        run("graph", "show", draft.result_id, "--limit", "1", "--offset", "1", "--json").output
    )
    assert [e["title"] for e in data["events"]] == ["Rounding agreed"]
    assert (data["limit"], data["offset"], data["truncated"]) == (1, 1, True)
    assert (data["totals"]["events"], data["totals"]["entities"]) == (2, 3)
    assert run("graph", "show", "--limit", "0").exit_code == 2
