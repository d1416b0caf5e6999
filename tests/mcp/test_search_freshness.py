"""``search`` over MCP sees messages stored after the server started and says when its
index is stale (issue 16): a real client session against ``proctor mcp`` over stdio.

Nobody indexes the fixture's messages beforehand: the server's background indexer does.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from proctor.mcp import ToolContext, call_tool
from proctor.search import index_status
from tests.mcp.conftest import McpHome
from tests.search.helpers import dialogue, write


def _params(home: McpHome) -> StdioServerParameters:
    command = home.command()
    return StdioServerParameters(command=command[0], args=command[1:], env=home.env())


async def _search(client: Client, query: str) -> dict[str, Any]:
    result = await client.call_tool("search", {"query": query, "limit": 20})
    text = "".join(block.text for block in result.content)  # type: ignore[union-attr]
    assert not result.is_error, text
    answer: dict[str, Any] = json.loads(text)
    return answer


def _message_ids(answer: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in answer["hits"] if hit["type"] == "message"]


@pytest.mark.slow
def test_search_finds_messages_stored_after_the_server_started(mcp_home: McpHome) -> None:
    store = mcp_home.store
    project = store.conversation(mcp_home.main_id).project
    assert index_status(store, encoder=None).documents > 0, "the review indexed graph objects"
    assert not index_status(store, encoder=None).full_text_current, "nobody indexed messages"

    async def session() -> list[dict[str, Any]]:
        async with Client(_params(mcp_home), cache=None) as client:
            answers = [await _search(client, "rounding invoice totals")]
            answers.append(await _search(client, "zebrafinch"))
            write(
                store,
                dialogue(
                    "late-1", [("Dev", "The zebrafinch migration is ready.")], project=project
                ),
            )
            write(
                store, dialogue("late-2", [("Dev", "A zebrafinch elsewhere.")], project="elsewhere")
            )
            answers.append(await _search(client, "zebrafinch"))
            write(
                store,
                dialogue("late-3", [("Ops", "Zebrafinch deployed at noon.")], project=project),
            )
            answers.append(await _search(client, "zebrafinch deployed"))
        return answers

    existing, before, after, later = anyio.run(session)

    assert _message_ids(existing), "the examples' messages are found without a manual index"
    assert existing["index"]["full_text_current"] is True
    assert not [i for i in _message_ids(before) if i.startswith("late-")]
    assert _message_ids(after)[0] == "late-1:t0", after
    assert "late-2:t0" not in _message_ids(after), "another project's message stays out"
    assert after["index"]["full_text_current"] is True
    assert _message_ids(later)[0] == "late-3:t0", later
    for answer in (existing, before, after, later):
        index = answer["index"]
        assert set(index) >= {"documents", "embedded", "stale", "full_text_current", "note"}
        assert index["stale"] == (index["note"] is not None)


def test_without_an_indexer_the_answer_says_the_index_is_stale(mcp_home: McpHome) -> None:
    store = mcp_home.store
    project = store.conversation(mcp_home.main_id).project
    write(
        store, dialogue("late-1", [("Dev", "The zebrafinch migration is ready.")], project=project)
    )

    answer = call_tool(ToolContext(store, mcp_home.main_id), "search", {"query": "zebrafinch"})

    index = answer["index"]
    assert index["stale"] is True
    assert index["full_text_current"] is False
    assert "not searchable yet" in index["note"]
    assert "proctor search --index-only" in index["note"]
    assert index["indexing"] is False
