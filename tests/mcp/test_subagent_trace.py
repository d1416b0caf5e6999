"""``subagent_trace`` stays bounded however long the sub-agent ran (SPEC UI-4)."""

from __future__ import annotations

import dataclasses
import json

import anyio
from mcp import Client

from proctor.mcp import build_server
from proctor.mcp._tools import TRACE_MAX_CHARS, TRACE_MESSAGES
from proctor.sources._prepare import prepare_bundle
from tests.builders import conversation_bundle
from tests.mcp.conftest import McpHome


def test_a_long_sub_agent_trace_shows_its_last_twenty_messages_within_the_size_cap(
    mcp_home: McpHome,
) -> None:
    bundle = conversation_bundle("test:long-agent", messages=80, parent=mcp_home.main_id)
    long_messages = tuple(
        dataclasses.replace(m, text=f"step {i}: " + "x" * 6_000)
        for i, m in enumerate(bundle.messages)
    )
    mcp_home.store.write_conversation(
        prepare_bundle(dataclasses.replace(bundle, messages=long_messages))
    )

    async def call() -> str:
        async with Client(build_server(mcp_home.store, mcp_home.main_id), cache=None) as client:
            result = await client.call_tool("subagent_trace", {"conversation_id": "test:long"})
            assert not result.is_error
            return "".join(block.text for block in result.content)

    text = anyio.run(call)
    trace = json.loads(text)

    assert len(text) <= TRACE_MAX_CHARS
    assert trace["messages_total"] == 80
    assert 0 < len(trace["messages"]) <= TRACE_MESSAGES
    assert trace["messages"][-1]["text"].startswith("step 79:")
    assert trace["rounds"] == 2
