"""``proctor mcp``: serve the story graph of one conversation's project to its agent."""

from __future__ import annotations

import os

import click

from proctor.errors import ConfigError


@click.command("mcp")
@click.option(
    "--conversation",
    "conversation",
    help="The conversation this server answers for (id or prefix; default $PROCTOR_CONVERSATION).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that launches the server; http for streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: loopback only.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
def mcp_command(conversation: str | None, transport: str, host: str, port: int) -> None:
    """Read-only MCP server: overview, graph, stories, search, subagent_trace.

    The tools are offered only while the app is enabled (`proctor app enable`) and the
    conversation's story-graph switch is on (`proctor conversations graph-access on ID`).
    While it runs, the server keeps the search index current in the background (new
    messages, then their embeddings); it writes nothing else.
    """
    # Before the first connection, the indexer's thread and the search package (which
    # registers sqlite-vec with SQLite as it is imported): ``_sqlite_library``.
    from proctor.store import stop_counting_allocations

    stop_counting_allocations()
    from proctor.mcp import check_loopback, serve_http, serve_stdio
    from proctor.search import BackgroundIndexer
    from proctor.store import open_store

    ref = conversation or os.environ.get("PROCTOR_CONVERSATION")
    if not ref:
        raise ConfigError(
            "proctor mcp needs the conversation it answers for: pass --conversation ID or set "
            "PROCTOR_CONVERSATION (`proctor conversations list` shows the ids)."
        )
    if transport == "http":
        check_loopback(host)
    store = open_store(read_only=True)
    # The tools read through the read-only store; the search index (derived data) is kept
    # current on a thread with a writable store of its own.
    indexer = BackgroundIndexer(open_store, close_store=True)
    try:
        conversation_id = store.resolve_conversation_id(ref)
        indexer.start()
        if transport == "http":
            serve_http(store, conversation_id, host, port, indexer)
        else:
            serve_stdio(store, conversation_id, indexer)
    finally:
        indexer.stop()
        store.close()
