"""``proctor conversations graph-access``: the per-conversation switch (SPEC UI-4)."""

from __future__ import annotations

from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.store import open_store
from tests.mcp.conftest import McpHome


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_switch_turns_on_and_off_and_starts_no_review(mcp_home: McpHome) -> None:
    store = mcp_home.store
    child = mcp_home.subagent_id
    runs_before = len(store.review_runs(limit=100))
    counts_before = store.counts()

    assert "off" in _run("conversations", "graph-access", "status", child).output
    turned_on = _run("conversations", "graph-access", "on", child)
    assert turned_on.exit_code == 0 and "on" in turned_on.output
    assert store.graph_access(child) is True
    assert "on" in _run("conversations", "graph-access", "status", child).output
    _run("conversations", "graph-access", "off", child)

    assert store.graph_access(child) is False
    assert len(store.review_runs(limit=100)) == runs_before
    assert store.counts() == counts_before


def test_the_switch_goes_with_its_conversation(mcp_home: McpHome) -> None:
    store = mcp_home.store
    store.delete_conversation(mcp_home.main_id)

    reopened = open_store()
    try:
        assert reopened.graph_access(mcp_home.main_id) is False
    finally:
        reopened.close()


def test_proctor_mcp_without_a_conversation_says_how_to_bind_one(mcp_home: McpHome) -> None:
    result = CliRunner().invoke(cli, ["mcp"], env={"PROCTOR_CONVERSATION": ""})

    assert result.exit_code == 2
    assert "--conversation" in result.output and "PROCTOR_CONVERSATION" in result.output


def test_reviews_of_every_project_reach_an_agent_bound_to_one_only_as_its_own_facts(
    mcp_home: McpHome,
) -> None:
    from proctor.mcp import ToolContext, call_tool

    store = mcp_home.store
    bound = ToolContext(store, mcp_home.main_id)
    everywhere = [r for r in store.overview(None, 20) if r.is_global]
    assert everywhere, "the fixture published a global review"
    listed = call_tool(bound, "overview", {})["results"]
    assert listed[0]["scope_key"].startswith("project:")
    assert listed[-1]["scope"] == "global"
    own = {
        c.conversation_id
        for c in store.list_conversations(
            project=store.conversation(mcp_home.main_id).project, include_children=True
        )
    }
    narrowed = call_tool(bound, "graph", {"result_id": everywhere[0].result_id})
    assert narrowed["answered_from"]["scope"] == "global"
    assert narrowed["events"]
    assert {event["conversation_id"] for event in narrowed["events"]} <= own
    newest = call_tool(bound, "graph", {})
    assert newest["result"]["scope_key"].startswith("project:")
