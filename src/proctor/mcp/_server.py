"""The MCP server bound to one conversation (SPEC UI-4), over stdio or streamable HTTP.

The gate is checked on every request, not at start: a person may turn the app or the
conversation's story-graph switch off while an agent is connected, and the next
``list_tools`` then offers nothing and every call is refused with a sentence saying which
switch to turn on. Answers are JSON text; errors are sentences, never tracebacks.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from proctor import __version__
from proctor.errors import ConfigError, ProctorError
from proctor.mcp._json import dumps
from proctor.mcp._tools import TOOLS, ToolContext, call_tool, gate_refusal
from proctor.search import BackgroundIndexer
from proctor.store import ReadStore

_log = logging.getLogger(__name__)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def build_server(
    store: ReadStore, conversation_id: str, indexer: BackgroundIndexer | None = None
) -> Server[Any]:
    """A low-level MCP server answering the story-graph tools for ``conversation_id``.

    ``indexer`` keeps the search index current while the server runs (``search`` waits
    for its full-text pass and reports its progress); without one the index is searched
    as it is, and answers say when it is stale.
    """
    context = ToolContext(store, conversation_id, indexer)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        refusal = await anyio.to_thread.run_sync(gate_refusal, store, conversation_id)
        if refusal is not None:
            return types.ListToolsResult(tools=[])
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=dict(tool.input_schema),
                )
                for tool in TOOLS
            ]
        )

    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(_answer, params.name, dict(params.arguments or {}))

    def _answer(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            refusal = gate_refusal(store, conversation_id)
            if refusal is not None:
                return _error(refusal)
            text = dumps(call_tool(context, name, arguments))
        except ProctorError as exc:
            return _error(str(exc))
        except Exception as exc:  # an infrastructure failure: a sentence, never a traceback
            _log.exception("tool %s failed", name)
            return _error(
                f"Proctor could not answer {name}: {type(exc).__name__}. "
                "If the database is older than this Proctor, run `proctor init` to upgrade it."
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(
        "proctor",
        version=__version__,
        instructions=(
            "Read-only access to the Proctor story graph of this conversation's project: "
            "overview, graph, stories, search, subagent_trace. Answers are JSON data."
        ),
        on_list_tools=list_tools,
        on_call_tool=answer,
    )


def serve_stdio(
    store: ReadStore, conversation_id: str, indexer: BackgroundIndexer | None = None
) -> None:
    """Serve over this process's stdin and stdout until the client closes them."""
    server = build_server(store, conversation_id, indexer)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


def check_loopback(host: str) -> None:
    """Refuse any address but loopback: ``proctor mcp`` has no access token."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(
            f"proctor mcp serves HTTP only on loopback (127.0.0.1, ::1 or localhost), not "
            f"{host!r}: it has no access token to protect another address. Use --host "
            "127.0.0.1 (an SSH tunnel reaches it from elsewhere), or the stdio transport."
        )


def transport_security(host: str, port: int) -> TransportSecuritySettings:
    """DNS-rebinding protection for ``host:port``: the ``Host`` must name this server (421
    otherwise) and an ``Origin``, when a browser sends one, must be its own (403 otherwise).

    The SDK's own default accepts pages from any port of the loopback names, and turns the
    protection off for any other loopback address (127.0.0.2): these names carry the port.
    """
    bound = f"[{host}]" if ":" in host else host
    names = dict.fromkeys(("127.0.0.1", "localhost", "[::1]", bound.lower()))
    hosts = [f"{name}:{port}" for name in names]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{authority}" for authority in hosts],
    )


def serve_http(
    store: ReadStore,
    conversation_id: str,
    host: str,
    port: int,
    indexer: BackgroundIndexer | None = None,
) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` (loopback only)."""
    import uvicorn

    check_loopback(host)
    server = build_server(store, conversation_id, indexer)
    app = server.streamable_http_app(host=host, transport_security=transport_security(host, port))
    uvicorn.run(app, host=host, port=port, log_level="warning")
