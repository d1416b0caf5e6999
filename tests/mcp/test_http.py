"""``proctor mcp --transport http``: streamable HTTP on loopback only (SPEC UI-4)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator

import anyio
import pytest
from mcp import Client

from tests.mcp.conftest import McpHome


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes], deadline: float = 20.0) -> None:
    stop = time.monotonic() + deadline
    while time.monotonic() < stop:
        if process.poll() is not None:
            raise AssertionError(f"proctor mcp exited: {process.stderr.read()!r}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port}")


@pytest.fixture
def http_url(mcp_home: McpHome) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        mcp_home.command("--transport", "http", "--port", str(port)),
        env=mcp_home.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        process.stderr.close()


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


def test_http_is_refused_on_an_address_other_than_loopback(mcp_home: McpHome) -> None:
    done = subprocess.run(
        mcp_home.command("--transport", "http", "--host", "0.0.0.0"),
        env=mcp_home.env(),
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 2
    assert "loopback" in done.stderr and "token" in done.stderr
    assert "Traceback" not in done.stderr
