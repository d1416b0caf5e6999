"""``proctor conversations``: list, show and delete imported conversations."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.cli._refs import conversation_refs
from proctor.cli._render import conversations_table, transcript_view
from proctor.cli._subagent_cards import card_json, card_panel, cards_view
from proctor.store import ConversationSummary


def summary_json(row: ConversationSummary) -> dict[str, Any]:
    """The ``--json`` shape of a conversation summary."""
    data = asdict(row.conversation)
    data.update(
        project=row.project,
        messages=row.messages,
        tool_calls=row.tool_calls,
        subagents=row.subagents,
        redactions=row.redactions,
        origin=row.origin,
        imported_at=row.imported_at,
        updated_at=row.updated_at,
    )
    return data


@click.group()
def conversations() -> None:
    """List, show and delete imported conversations."""


@conversations.command("list")
@click.option("--project", help="Only this project.")
@click.option("--all", "include_children", is_flag=True, help="Include sub-agent conversations.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@json_option()
def list_command(
    project: str | None, include_children: bool, limit: int, offset: int, as_json: bool
) -> None:
    """List conversations, newest first."""
    with readable_store() as store:
        rows = store.list_conversations(
            project=project, include_children=include_children, limit=limit, offset=offset
        )
        total = store.count_conversations(project=project, include_children=include_children)
        refs = {} if as_json else conversation_refs(store, rows)
    if as_json:
        print_json({"total": total, "offset": offset, "items": [summary_json(r) for r in rows]})
        return
    if not rows:
        console.print("No conversations yet. Import some with `proctor ingest PATH…`.")
        return
    console.print(conversations_table(rows, refs, width=console.width))
    shown_to = offset + len(rows)
    if total > shown_to or offset:
        console.print(f"{offset + 1}–{shown_to} of {total}; use --offset to page")


@conversations.command("show")
@click.argument("conversation")
@click.option("--full", is_flag=True, help="Show whole messages and tool outputs.")
@click.option("--active-only", is_flag=True, help="Hide messages on abandoned branches.")
@json_option()
def show_command(conversation: str, full: bool, active_only: bool, as_json: bool) -> None:
    """Show one conversation as a readable transcript (CONVERSATION: id, session id or prefix),
    then a card per sub-agent it started: type, task, status, duration, tool calls, its own
    findings and its final summary (``--json``: ``subagents``; a sub-agent's own ``card``)."""
    with readable_store() as store:
        transcript = store.transcript(store.resolve_conversation_id(conversation))
        transcript_id = transcript.summary.conversation_id
        cards = store.subagent_cards(transcript_id)
        parent = transcript.summary.conversation.parent_conversation_id
        own = (
            next(
                (c for c in store.subagent_cards(parent) if c.conversation_id == transcript_id),
                None,
            )
            if parent is not None
            else None
        )
    if as_json:
        print_json(
            {
                "conversation": summary_json(transcript.summary),
                "messages": [asdict(m) for m in transcript.messages],
                "tool_calls": [asdict(c) for c in transcript.tool_calls],
                "tasks": [asdict(t) for t in transcript.tasks],
                "task_events": [asdict(e) for e in transcript.task_events],
                "subagent_run": None
                if transcript.subagent_run is None
                else asdict(transcript.subagent_run),
                "children": [summary_json(c) for c in transcript.children],
                "subagents": [card_json(card) for card in cards],
                "card": None if own is None else card_json(own),
            }
        )
        return
    console.print(transcript_view(transcript, width=0 if full else 1200, branches=not active_only))
    if own is not None:
        console.print(card_panel(own, full=full))
    if cards:
        console.print(cards_view(cards, full=full))


@conversations.command("delete")
@click.argument("conversation")
@click.option("--yes", "-y", "assume_yes", is_flag=True, help="Do not ask for confirmation.")
def delete_command(conversation: str, assume_yes: bool) -> None:
    """Delete a conversation, its sub-agent conversations and all their sources.

    Everything derived from them goes in the same transaction: findings and notifications,
    supervision sessions, runs, goal versions and intent labels (of their tasks too),
    model-call records, search documents, review checkpoints and the graph-access switch.
    Published review results keep what they said; their citations of these sources then
    read as deleted. Importing the same file again brings the conversation back.
    """
    with writable_store() as store:
        conversation_id = store.resolve_conversation_id(conversation)
        summary = store.conversation(conversation_id)
        if not assume_yes:
            click.confirm(
                f"Delete {conversation_id} ({summary.messages} messages, "
                f"{summary.tool_calls} tool calls, {summary.subagents} sub-agents)?",
                abort=True,
            )
        deleted = store.delete_conversation(conversation_id)
    console.print(f"Deleted {len(deleted)} conversation(s): " + ", ".join(deleted), markup=False)


@conversations.command("graph-access")
@click.argument("action", type=click.Choice(["on", "off", "status"]))
@click.argument("conversation")
def graph_access_command(action: str, conversation: str) -> None:
    """Let this conversation's agents read the story graph over `proctor mcp` (on|off|status).

    The switch is only a permission: turning it on starts no review and writes nothing else.
    The MCP tools answer only while the app is enabled too (`proctor app enable`).
    """
    if action == "status":
        with readable_store() as reader:
            conversation_id = reader.resolve_conversation_id(conversation)
            enabled = reader.graph_access(conversation_id)
    else:
        with writable_store() as store:
            conversation_id = store.resolve_conversation_id(conversation)
            enabled = action == "on"
            store.set_graph_access(conversation_id, enabled)
    state = "on" if enabled else "off"
    console.print(f"Story-graph access for {conversation_id}: {state}", markup=False)
