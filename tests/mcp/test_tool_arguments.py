"""Tools refuse what their input schema does not allow, and never hint at other projects.

An agent bound to one conversation learns nothing of other projects through its errors:
ids and prefixes resolve among its own project's conversations and results, and a
foreign id is answered exactly as one that does not exist (issue 16).
"""

from __future__ import annotations

from typing import Any

import pytest

from proctor.mcp import TOOLS, ToolContext, ToolRefusal, call_tool
from proctor.mcp._tools import GRAPH_LIMIT_MAX, QUERY_MAX_CHARS, SEARCH_LIMIT_MAX
from tests.mcp.conftest import McpHome


@pytest.fixture(scope="module")
def bound(shared_mcp_home: McpHome) -> ToolContext:
    """The tools as an agent bound to the main conversation calls them. Every test here only
    reads, so the module shares one prepared home, its store read-only as in ``proctor mcp``."""
    return ToolContext(shared_mcp_home.store, shared_mcp_home.main_id)


def _refusal(bound: ToolContext, name: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolRefusal) as refused:
        call_tool(bound, name, arguments)
    return str(refused.value)


@pytest.mark.parametrize(
    ("name", "arguments", "extra"),
    [
        ("overview", {"offset": 10}, "`offset`"),
        ("graph", {"limit": 5, "project": "ledger-sync"}, "`project`"),
        ("stories", {"target": "all"}, "`target`"),
        ("search", {"query": "rounding", "project": "ledger-sync"}, "`project`"),
        ("search", {"query": "rounding", "conversation_id": "codex"}, "`conversation_id`"),
        ("subagent_trace", {"conversation_id": "cc", "limit": 3}, "`limit`"),
    ],
)
def test_an_argument_the_schema_does_not_declare_is_refused_by_name(
    bound: ToolContext, name: str, arguments: dict[str, Any], extra: str
) -> None:
    message = _refusal(bound, name, arguments)
    assert f"{name} does not take {extra}" in message
    declared = next(tool for tool in TOOLS if tool.name == name).input_schema["properties"]
    assert all(f"`{argument}`" in message for argument in declared)


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("search", {"query": "x", "limit": 5000}, f"`limit` 5000 is above the maximum {SEARCH_LIMIT_MAX}"),
        ("search", {"query": "x", "limit": SEARCH_LIMIT_MAX + 1}, "above the maximum"),
        ("graph", {"limit": GRAPH_LIMIT_MAX + 1}, f"above the maximum {GRAPH_LIMIT_MAX}"),
        ("stories", {"limit": 10**12}, "above the maximum"),
        ("overview", {"limit": 51}, "`limit` 51 is above the maximum 50"),
        ("overview", {"limit": 0}, "`limit` 0 is below the minimum 1"),
        ("stories", {"limit": -3}, "below the minimum 1"),
        ("graph", {"limit": "5"}, "`limit` must be a whole number from 1 to"),
        ("graph", {"limit": 2.5}, "whole number"),
        ("overview", {"limit": True}, "whole number"),
        ("search", {"query": 42}, "`query` must be a string"),
        ("search", {"query": "w" * (QUERY_MAX_CHARS + 1)}, f"at most {QUERY_MAX_CHARS:,}"),
        ("search", {}, "`query` is required"),
        ("search", {"query": ""}, "`query` is required"),
        ("subagent_trace", {"conversation_id": ["cc"]}, "must be a string"),
    ],
)  # fmt: skip
def test_a_value_out_of_range_or_of_the_wrong_type_is_refused_not_clamped(
    bound: ToolContext, name: str, arguments: dict[str, Any], expected: str
) -> None:
    assert expected in _refusal(bound, name, arguments)


def test_limits_at_the_bounds_are_answered(bound: ToolContext) -> None:
    found = call_tool(bound, "search", {"query": "rounding", "limit": SEARCH_LIMIT_MAX})
    assert len(found["hits"]) <= SEARCH_LIMIT_MAX
    assert len(call_tool(bound, "stories", {"limit": 1})["stories"]) <= 1
    assert call_tool(bound, "overview", {"limit": None})["results"], "null means the default"


def test_an_unknown_tool_is_refused_with_the_tools_there_are(bound: ToolContext) -> None:
    message = _refusal(bound, "delete_everything", {})
    assert "There is no tool 'delete_everything'" in message
    assert "subagent_trace" in message


def test_an_ambiguous_prefix_lists_only_the_bound_projects_conversations(
    shared_mcp_home: McpHome, bound: ToolContext
) -> None:
    store = shared_mcp_home.store
    everyone = [c.conversation_id for c in store.list_conversations(include_children=True)]
    foreign = [c for c in everyone if store.conversation(c).project != "invoice-service"]
    assert foreign and all(c.startswith("c") for c in everyone), "a prefix shared across projects"
    message = _refusal(bound, "subagent_trace", {"conversation_id": "c"})
    assert "matches 2 conversations of project 'invoice-service'" in message
    assert shared_mcp_home.main_id in message and shared_mcp_home.subagent_id in message
    for other in foreign:
        assert other not in message
        assert other.split(":", 1)[1][:8] not in message


def test_a_foreign_conversation_is_answered_as_one_that_does_not_exist(
    shared_mcp_home: McpHome, bound: ToolContext
) -> None:
    store = shared_mcp_home.store
    (foreign,) = [
        c for c in store.list_conversations(include_children=True) if c.project != "invoice-service"
    ]
    answers = {
        ref: _refusal(bound, "subagent_trace", {"conversation_id": ref}).replace(ref, "REF")
        for ref in (
            foreign.conversation_id,
            foreign.conversation_id[:9],
            foreign.conversation.external_id,
            "codex:ffffffff-0000",
        )
    }
    assert len(set(answers.values())) == 1, answers
    assert (
        "No conversation of project 'invoice-service' matches 'REF'"
        in answers["codex:ffffffff-0000"]
    )
    # The project's own sub-agent resolves by a prefix that other projects' ids share.
    trace = call_tool(bound, "subagent_trace", {"conversation_id": "cc:agent"})
    assert trace["conversation_id"] == shared_mcp_home.subagent_id


def test_an_unknown_result_is_refused_and_a_global_one_is_read_by_prefix(
    shared_mcp_home: McpHome, bound: ToolContext
) -> None:
    store = shared_mcp_home.store
    (everywhere,) = [r for r in store.overview(None, 20) if r.is_global]
    own = call_tool(bound, "overview", {})["results"][0]["result_id"]
    message = _refusal(bound, "graph", {"result_id": "ffffffff"})
    assert message == (
        "No result covering project 'invoice-service' matches 'ffffffff'; call `overview` "
        "for the results this project can read."
    )
    assert call_tool(bound, "graph", {"result_id": own[:8]})["result"]["result_id"] == own
    narrowed = call_tool(bound, "graph", {"result_id": everywhere.result_id[:8]})
    assert narrowed["result"]["result_id"] == everywhere.result_id
    assert narrowed["answered_from"]["scope"] == "global"


def test_a_flood_of_undeclared_arguments_is_named_briefly(bound: ToolContext) -> None:
    arguments: dict[str, Any] = {"query": "x"} | {f"extra{n}" * 40: n for n in range(30)}
    message = _refusal(bound, "search", arguments)
    assert "and 25 more" in message
    assert len(message) < 600
