"""``proctor conversations show`` carries the sub-agent cards (seed 004): the parent lists a
card per run it started, a sub-agent shows its own; text and ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.store import open_store
from tests.trace_world import cite, family_lines, write_jsonl


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def family(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "family.jsonl", family_lines())
    run("ingest", str(path))
    store = open_store()
    try:
        cite(store, "pj:family-done", "message", "pj:family-done:msg:done-1", title="A finding")
    finally:
        store.close()


@pytest.mark.usefixtures("family")
def test_the_parent_s_json_lists_a_card_per_sub_agent_run() -> None:
    data = json.loads(run("conversations", "show", "family", "--json").output)
    cards = {card["conversation_id"]: card for card in data["subagents"]}
    assert list(cards) == ["pj:family-broke", "pj:family-busy", "pj:family-done", "pj:family-loose"]
    done = cards["pj:family-done"]
    assert (done["agent_type"], done["description"], done["status"]) == (
        "Explore",
        "Map the money code",
        "completed",
    )
    assert (done["duration_ms"], done["tool_calls"], done["findings"], done["finished"]) == (
        12_000,
        2,
        1,
        True,
    )
    assert done["summary"] == "## Found\n\n- `totals.py:19`"
    assert done["parent_tool_call_id"] == "pj:family:call:task-done"
    assert cards["pj:family-busy"]["finished"] is False
    assert data["card"] is None


@pytest.mark.usefixtures("family")
def test_the_text_shows_each_card_and_a_sub_agent_shows_its_own() -> None:
    text = run("conversations", "show", "family").output
    assert "sub-agent cards (4)" in text
    assert "Explore · completed · 12.0 s · 2 tool calls · 1 findings (1 open)" in text
    assert "Plan · running" in text and "Explore · error" in text
    assert "task: Map the money code" in text
    assert "trace: proctor conversations show pj:family-done" in text
    child = run("conversations", "show", "pj:family-done").output
    assert "sub-agent cards" not in child
    assert "task: Map the money code" in child and "started by pj:family:call:task-done" in child
    own = json.loads(run("conversations", "show", "pj:family-done", "--json").output)
    assert own["card"]["description"] == "Map the money code" and own["subagents"] == []
