"""``proctor mcp --transport http``: streamable HTTP on loopback only (SPEC UI-4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.loopback import free_port, serving
from tests.mcp.conftest import McpHome


@pytest.fixture
def http_url(mcp_home: McpHome) -> Iterator[str]:
    port = free_port()
    with serving(
        mcp_home.command("--transport", "http", "--port", str(port)), mcp_home.env(), port
    ):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.slow
def test_an_agent_searches_the_story_graph_over_streamable_http(
    http_url: str, mcp_home: McpHome
) -> None:
    async def session() -> tuple[set[str], dict[str, object], str]:
        async with Client(http_url, cache=None) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            found = await client.call_tool("search", {"query": "rounding", "limit": 3})
            mcp_home.store.set_graph_access(mcp_home.main_id, False)
            refused = await client.call_tool("search", {"query": "rounding"})
            assert refused.is_error
            return tools, json.loads(found.content[0].text), refused.content[0].text

    tools, found, refused = anyio.run(session)

    assert "search" in tools
    hits = found["hits"]
    assert isinstance(hits, list) and 0 < len(hits) <= 3
    assert any(hit["source_refs"] for hit in hits)
    assert "graph-access on" in refused


@pytest.mark.slow
def test_http_is_refused_on_an_address_other_than_loopback(proctor_home: Path) -> None:
    """Refused before any store is opened: the home has none (and the PostgreSQL pass, which
    runs only tests that reach a store, leaves this one out)."""
    command = [sys.executable, "-m", "proctor.cli.main", "mcp", "--conversation", "c1"]
    env = {
        "PROCTOR_HOME": str(proctor_home),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": os.environ.get("PATH", ""),
    }
    done = subprocess.run(
        [*command, "--transport", "http", "--host", "0.0.0.0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 2
    assert "loopback" in done.stderr and "token" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (proctor_home / "proctor.db").exists()
