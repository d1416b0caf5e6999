"""``proctor mcp`` serves its tools from a read-only store: the database refuses its writes.

The command opens ``open_store(read_only=True)``: no write methods, and a write statement
sent through its connection is refused by the database (SQLite ``mode=ro``; PostgreSQL
read-only transactions). Run on both backends (``PROCTOR_TEST_BACKEND=postgresql``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import delete, func, select
from sqlalchemy.exc import DBAPIError

import proctor.mcp
import proctor.search
from proctor.cli.main import cli
from proctor.errors import StoreError
from proctor.mcp import ToolContext, call_tool
from proctor.store import ReadStore, SqlStore
from proctor.store import tables as t
from tests.mcp.conftest import McpHome

REFUSED = re.compile(r"readonly database|read-only transaction")
"""SQLite's ``attempt to write a readonly database``; PostgreSQL's ``cannot execute … in a
read-only transaction``."""


class _NoIndexer:
    """Stands in for the background indexer (it writes with a store of its own)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def test_the_mcp_servers_store_reads_its_tools_and_refuses_a_write(
    mcp_home: McpHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def serve(store: ReadStore, conversation_id: str, indexer: Any) -> None:
        seen["store"] = store
        context = ToolContext(store, conversation_id, None)
        seen["overview"] = call_tool(context, "overview", {})
        seen["trace"] = call_tool(context, "subagent_trace", {})
        try:
            with store._read() as connection:
                connection.execute(delete(t.conversations))
                connection.commit()
        except (StoreError, DBAPIError) as exc:
            seen["refused"] = str(exc)

    monkeypatch.setattr(proctor.mcp, "serve_stdio", serve)
    monkeypatch.setattr(proctor.search, "BackgroundIndexer", _NoIndexer)
    result = CliRunner().invoke(cli, ["mcp", "--conversation", mcp_home.main_id])
    assert result.exit_code == 0, result.output

    store = seen["store"]
    assert isinstance(store, ReadStore) and not isinstance(store, SqlStore)
    for name in ("write_conversation", "set_graph_access", "publish_result", "set_setting"):
        assert not hasattr(store, name)
    assert REFUSED.search(seen["refused"]), seen
    assert seen["overview"] and seen["trace"]
    with mcp_home.store._read() as connection:
        assert connection.execute(select(func.count()).select_from(t.conversations)).scalar()
