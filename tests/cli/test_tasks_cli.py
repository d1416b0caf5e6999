"""``proctor tasks`` and ``proctor memories list``: what accepting suggestions made can be
listed from the terminal (HB-6: nothing Proctor creates is write-only)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.store import open_store
from tests.conftest import EXAMPLES_DIR


@pytest.fixture(autouse=True)
def app_enabled() -> None:
    store = open_store()
    try:
        store.set_setting("app.enabled", True)
    finally:
        store.close()


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _suggested() -> list[dict[str, str]]:
    assert _invoke("ingest", str(EXAMPLES_DIR))[0] == 0
    code, output = _invoke("review", "run", "--json")
    assert code == 0, output
    assert _invoke("suggestions", "retry", json.loads(output)["result_id"])[0] == 0
    listed: list[dict[str, str]] = json.loads(_invoke("suggestions", "list", "--json")[1])
    return listed


def test_no_tasks_says_how_one_is_made() -> None:
    code, output = _invoke("tasks", "list")
    assert code == 0
    assert "No tasks" in output and "proctor suggestions accept" in output


def test_accepted_open_items_are_listed_as_tasks_with_their_suggestions() -> None:
    items = [s for s in _suggested() if s["kind"] == "open_item"][:2]
    assert len(items) == 2
    for item in items:
        assert _invoke("suggestions", "accept", item["suggestion_id"][:8])[0] == 0

    code, output = _invoke("tasks", "list", "--json")
    assert code == 0, output
    tasks = json.loads(output)
    assert {t["suggestion_id"] for t in tasks} == {s["suggestion_id"] for s in items}
    assert {t["title"] for t in tasks} == {s["title"] for s in items}
    assert all(t["status"] == "paused" for t in tasks)
    code, output = _invoke("tasks", "list")
    assert code == 0
    for item in items:
        assert item["title"][:20] in output
        assert item["suggestion_id"][:8] in output


def test_an_ignored_suggestion_makes_no_task() -> None:
    item = next(s for s in _suggested() if s["kind"] == "open_item")
    assert _invoke("suggestions", "ignore", item["suggestion_id"][:8])[0] == 0
    assert json.loads(_invoke("tasks", "list", "--json")[1]) == []


def test_a_memory_an_accepted_convention_recorded_names_its_suggestion() -> None:
    conventions = [s for s in _suggested() if s["kind"] == "convention"]
    if not conventions:
        pytest.skip("the examples' review proposes no convention")
    chosen = conventions[0]
    assert _invoke("suggestions", "accept", chosen["suggestion_id"][:8])[0] == 0

    listed = json.loads(_invoke("memories", "list", "--json")[1])["memories"]
    assert [m["suggestion_id"] for m in listed] == [chosen["suggestion_id"]]
    assert f"from suggestion {chosen['suggestion_id'][:8]}" in _invoke("memories", "list")[1]
