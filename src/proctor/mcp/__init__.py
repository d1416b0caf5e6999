"""The read-only MCP server: agents ask their project's story graph (SPEC UI-4).

A thin surface: ``_tools.py`` holds the tools as plain functions over the store,
``_server.py`` wires them to the official ``mcp`` SDK over stdio or streamable HTTP.
"""

from proctor.mcp._server import build_server, check_loopback, serve_http, serve_stdio
from proctor.mcp._tools import TOOLS, ToolContext, ToolRefusal, call_tool, gate_refusal

__all__ = [
    "TOOLS",
    "ToolContext",
    "ToolRefusal",
    "build_server",
    "call_tool",
    "check_loopback",
    "gate_refusal",
    "serve_http",
    "serve_stdio",
]
