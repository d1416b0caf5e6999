"""What stands behind a suggestion and what accepting it made, over HTTP (HB-5, HB-6):
nothing Proctor creates is write-only."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.heartbeat.suggestions import make_suggestions
from proctor.store import SqlStore
from tests.api.conftest import Api


@pytest.fixture
def suggested(api: Api) -> list[dict[str, Any]]:
    """Suggestions made (rule text, no model) from the published review of the examples."""
    store: SqlStore = api.app.state.store_holder.get()
    result_id = api.get("/api/results").json()["results"][0]["result_id"]
    make_suggestions(store, result_id=result_id, heartbeat_id=None, phrasing=None)
    found: list[dict[str, Any]] = api.get("/api/suggestions", params={"limit": 100}).json()[
        "suggestions"
    ]
    assert {s["kind"] for s in found} >= {"open_item", "convention"}
    return found


def test_the_changes_behind_a_suggestion_quote_its_evidence(
    api: Api, suggested: list[dict[str, Any]]
) -> None:
    item = next(s for s in suggested if s["kind"] == "open_item")
    changes = api.get(f"/api/suggestions/{item['suggestion_id'][:8]}/changes").json()

    assert changes["suggestion_id"] == item["suggestion_id"]
    assert changes["result_id"] == item["result_id"]
    assert (changes["object_type"], changes["object_id"]) == ("open_item", item["object_id"])
    assert changes["why"] == item["rule_text"]
    assert changes["evidence_total"] == len(item["evidence"]) > 0
    assert [(e["source_type"], e["source_id"]) for e in changes["evidence"]] == [
        (e["source_type"], e["source_id"]) for e in item["evidence"]
    ][:20]
    assert all(e["exists"] and e["excerpt"] and e["conversation_id"] for e in changes["evidence"])
    assert all(len(e["excerpt"]) <= 300 for e in changes["evidence"])
    assert changes["task"] is None and changes["memory"] is None


def test_accepting_shows_the_task_or_memory_it_made_in_its_changes_and_the_lists(
    api: Api, suggested: list[dict[str, Any]]
) -> None:
    item = next(s for s in suggested if s["kind"] == "open_item")
    convention = next(s for s in suggested if s["kind"] == "convention")
    task = api.post(f"/api/suggestions/{item['suggestion_id']}/accept").json()["task"]
    memory = api.post(f"/api/suggestions/{convention['suggestion_id']}/accept").json()["memory"]

    item_changes = api.get(f"/api/suggestions/{item['suggestion_id']}/changes").json()
    convention_changes = api.get(f"/api/suggestions/{convention['suggestion_id']}/changes").json()
    assert item_changes["task"]["task_id"] == task["task_id"]
    assert item_changes["memory"] is None
    assert convention_changes["memory"]["memory_id"] == memory["memory_id"]
    assert convention_changes["task"] is None

    tasks = api.get("/api/tasks").json()["tasks"]
    assert [(t["task_id"], t["suggestion_id"], t["status"]) for t in tasks] == [
        (task["task_id"], item["suggestion_id"], "paused")
    ]
    memories = api.get("/api/memories").json()["memories"]
    assert [(m["memory_id"], m["suggestion_id"], m["entity_id"]) for m in memories] == [
        (memory["memory_id"], convention["suggestion_id"], convention["object_id"])
    ]


def test_tasks_are_filtered_by_project_and_unknown_suggestions_are_refused(
    api: Api, suggested: list[dict[str, Any]]
) -> None:
    item = next(s for s in suggested if s["kind"] == "open_item" and s["project_id"])
    api.post(f"/api/suggestions/{item['suggestion_id']}/accept")
    projects = {p["project_id"]: p["name"] for p in api.get("/api/projects").json()["projects"]}
    own = projects[item["project_id"]]
    other = next(name for pid, name in projects.items() if pid != item["project_id"])

    assert len(api.get("/api/tasks", params={"project": own}).json()["tasks"]) == 1
    assert api.get("/api/tasks", params={"project": other}).json()["tasks"] == []
    assert api.get("/api/tasks", params={"limit": 0}).status_code == 422
    assert api.get("/api/suggestions/zzzz-none/changes").status_code == 404
