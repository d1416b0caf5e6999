"""``proctor mcp`` over stdio, through the SDK's real client (SPEC UI-4)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.conftest import McpHome

TOOLS = {"overview", "graph", "stories", "search", "subagent_trace"}


def _params(home: McpHome) -> StdioServerParameters:
    command = home.command()
    return StdioServerParameters(command=command[0], args=command[1:], env=home.env())


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


@pytest.mark.slow
def test_an_agent_lists_and_calls_every_read_only_tool_over_stdio(mcp_home: McpHome) -> None:
    async def session() -> dict[str, Any]:
        answers: dict[str, Any] = {}
        async with Client(_params(mcp_home), cache=None) as client:
            answers["tools"] = {tool.name for tool in (await client.list_tools()).tools}
            for name, arguments in [
                ("overview", {}),
                ("graph", {"limit": 5}),
                ("stories", {}),
                ("search", {"query": "rounding invoice totals", "limit": 5}),
                ("subagent_trace", {}),
                ("subagent_trace", {"conversation_id": mcp_home.subagent_id}),
            ]:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, _text(result)
                answers.setdefault(name, []).append(json.loads(_text(result)))
        return answers

    answers = anyio.run(session)

    assert answers["tools"] == TOOLS
    assert answers["overview"][0]["project"] == "invoice-service"
    assert answers["overview"][0]["results"]
    graph = answers["graph"][0]
    assert 0 < len(graph["events"]) <= 5
    assert all(event["sources"] for event in graph["events"])
    assert answers["stories"][0]["stories"]
    hits = answers["search"][0]["hits"]
    assert hits and all(hit["source_refs"] or hit["id"] for hit in hits)
    assert any(hit["source_refs"] for hit in hits)
    children = answers["subagent_trace"][0]["subagents"]
    assert [child["conversation_id"] for child in children] == [mcp_home.subagent_id]
    trace = answers["subagent_trace"][1]
    assert trace["conversation_id"] == mcp_home.subagent_id
    assert {"summary", "status", "rounds", "total_tokens", "rejected_tools", "stop_kind"} <= set(
        trace
    )
    assert 0 < len(trace["messages"]) <= 20


@pytest.mark.slow
def test_the_tools_are_hidden_and_refused_while_a_switch_is_off(mcp_home: McpHome) -> None:
    store = mcp_home.store

    async def session() -> list[tuple[set[str], str]]:
        seen: list[tuple[set[str], str]] = []
        async with Client(_params(mcp_home), cache=None) as client:
            for app_on, access_on in [(True, True), (True, False), (False, True)]:
                store.set_setting("app.enabled", app_on)
                store.set_graph_access(mcp_home.main_id, access_on)
                tools = {tool.name for tool in (await client.list_tools()).tools}
                result = await client.call_tool("overview", {})
                seen.append((tools, _text(result) if result.is_error else ""))
        return seen

    (open_tools, no_error), (hidden, access_error), (hidden_too, app_error) = anyio.run(session)

    assert open_tools == TOOLS and no_error == ""
    assert hidden == set() and hidden_too == set()
    assert f"proctor conversations graph-access on {mcp_home.main_id}" in access_error
    assert "proctor app enable" in app_error
    assert "Traceback" not in access_error + app_error
