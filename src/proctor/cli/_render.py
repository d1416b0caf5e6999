"""Human-readable rendering of transcripts, lists and import reports.

Observed content is untrusted: it is always wrapped in ``rich.text.Text`` so markup-like
text inside a transcript is shown literally, never interpreted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from proctor._util.text import one_line
from proctor.cli._tables import Column, fitted_table
from proctor.ingest import IngestReport
from proctor.store import ConversationSummary, StoredTranscript
from proctor.transcript import Message, ToolCall

_ROLE_STYLE = {
    "user": "bold cyan",
    "assistant": "bold green",
    "system": "bold magenta",
    "developer": "bold magenta",
    "tool": "bold yellow",
}
_STATUS_STYLE = {
    "ok": "green",
    "error": "red",
    "pending": "yellow",
    "interrupted": "yellow",
    "rejected": "red",
}


def when(value: datetime | None) -> str:
    """A short UTC timestamp."""
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a note of what was cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters; --full shows all]"


def _parents_first(rows: list[ConversationSummary]) -> list[tuple[ConversationSummary, bool]]:
    """Rows with each sub-agent conversation right under its parent."""
    children: dict[str, list[ConversationSummary]] = defaultdict(list)
    ids = {row.conversation_id for row in rows}
    for row in rows:
        parent = row.conversation.parent_conversation_id
        if parent is not None and parent in ids:
            children[parent].append(row)
    ordered: list[tuple[ConversationSummary, bool]] = []
    for row in rows:
        parent = row.conversation.parent_conversation_id
        if parent is not None and parent in ids:
            continue
        ordered.append((row, False))
        ordered.extend((child, True) for child in children.get(row.conversation_id, []))
    return ordered


def conversations_table(
    rows: list[ConversationSummary],
    refs: Mapping[str, str],
    *,
    width: int,
    title: str | None = None,
) -> Table:
    """The table of ``proctor conversations list``: sub-agents indented under their parent.

    ``refs`` (see ``_refs.conversation_refs``) is what to type to reach each row.
    """
    columns = (
        Column("ref", "id", style="cyan"),
        Column("project", "text", drop=4, wrap=False, least=10),
        Column("format", drop=2),
        Column("title", "text", wrap=False),
        Column("started (UTC)", drop=5),
        Column("msgs", drop=3, justify="right"),
        Column("tools", drop=1, justify="right"),
        Column("agents", drop=1, justify="right"),
    )
    cells: list[list[str | Text]] = []
    for row, nested in _parents_first(rows):
        c = row.conversation
        label = c.title or ""
        if nested:
            label = f"↳ {c.kind}: {label}"
        cells.append(
            [
                ("  " if nested else "") + refs[row.conversation_id],
                row.project,
                c.format,
                one_line(label, 44),
                when(c.started_at),
                str(row.messages),
                str(row.tool_calls),
                str(row.subagents) if row.subagents else "",
            ]
        )
    return fitted_table(columns, cells, width=width, title=title)


def _arguments_summary(call: ToolCall, limit: int = 160) -> str:
    args: Any = call.arguments
    if isinstance(args, dict):
        for key in (
            "command",
            "cmd",
            "file_path",
            "path",
            "pattern",
            "url",
            "query",
            "description",
        ):
            if isinstance(args.get(key), str | list):
                value = args[key]
                shown = " ".join(value) if isinstance(value, list) else value
                return clip(f"{key}={shown}", limit)
        import orjson

        return clip(orjson.dumps(args).decode(), limit)
    return clip(str(args), limit)


def _tool_block(call: ToolCall, width: int) -> Text:
    text = Text("  ↳ ", style="dim")
    text.append(call.name, style="bold yellow")
    text.append(f"({_arguments_summary(call)})")
    text.append(f"  [{call.status}", style=_STATUS_STYLE.get(call.status, ""))
    if call.exit_code is not None:
        text.append(f", exit {call.exit_code}", style=_STATUS_STYLE.get(call.status, ""))
    text.append("]", style=_STATUS_STYLE.get(call.status, ""))
    if call.result_text:
        result = clip(call.result_text.strip(), width)
        text.append("\n    ")
        text.append(result.replace("\n", "\n    "), style="dim")
    return text


def _message_block(message: Message, width: int) -> Text:
    header = Text()
    label = message.role if message.author is None else f"{message.role} · {message.author}"
    header.append(label, style=_ROLE_STYLE.get(message.role, "bold"))
    if message.kind not in ("prompt", "reply"):
        header.append(
            f" ({message.kind}{', derived' if message.derived else ''})", style="italic dim"
        )
    if not message.on_active_branch:
        header.append("  [abandoned branch]", style="yellow")
    header.append(f"  {when(message.created_at)}", style="dim")
    body = Text(
        clip(message.text, width) if message.text else "",
        style="" if message.on_active_branch else "dim",
    )
    return Text("\n").join([header, body]) if message.text else header


def transcript_view(
    transcript: StoredTranscript, *, width: int = 1200, branches: bool = True
) -> Group:
    """A conversation rendered for reading: header, messages, tool calls under their message."""
    summary = transcript.summary
    c = summary.conversation
    calls_by_message: dict[str | None, list[ToolCall]] = defaultdict(list)
    for call in transcript.tool_calls:
        calls_by_message[call.message_source_id].append(call)
    usage = [m.usage for m in transcript.messages if m.usage is not None]
    tokens = sum(u.total_tokens for u in usage)
    header = Text()
    header.append(c.title or "(untitled)", style="bold")
    header.append(f"\n{c.conversation_id}", style="dim")
    header.append(f"\nproject {summary.project} · {c.format} · {c.kind}")
    header.append(f"\n{when(c.started_at)} → {when(c.ended_at)}")
    if c.model:
        header.append(f" · {c.model}")
    header.append(
        f"\n{summary.messages} messages · {summary.tool_calls} tool calls · {tokens} tokens"
    )
    if summary.redactions:
        header.append(f" · {summary.redactions} secrets redacted", style="yellow")
    if transcript.subagent_run is not None:
        run = transcript.subagent_run
        header.append(
            f"\nsub-agent of {c.parent_conversation_id} via {run.parent_tool_call_id or 'an unlinked call'}"
            f" · {run.agent_type or 'agent'} · {run.status or 'unknown status'} · {run.rounds} rounds",
            style="cyan",
        )
    parts: list[Any] = [Panel(header, expand=False)]
    for message in transcript.messages:
        if not branches and not message.on_active_branch:
            continue
        parts.append(_message_block(message, width))
        for call in calls_by_message.pop(message.source_id, []):
            if branches or call.on_active_branch:
                parts.append(_tool_block(call, min(width, 600)))
        parts.append(Text(""))
    orphans = [call for calls in calls_by_message.values() for call in calls]
    if orphans:
        parts.append(Text("tool calls without a message", style="bold yellow"))
        parts.extend(_tool_block(call, min(width, 600)) for call in orphans)
    if transcript.task_events:
        parts.append(Text("events", style="bold"))
        for event in transcript.task_events:
            line = Text(f"  {when(event.created_at)} ", style="dim")
            line.append(event.kind, style="magenta")
            if event.text:
                line.append(" " + clip(event.text.replace("\n", " "), 200))
            parts.append(line)
    if transcript.children:
        parts.append(Text("sub-agent conversations", style="bold"))
        for child in transcript.children:
            parts.append(
                Text(
                    f"  {child.conversation_id}  {child.conversation.kind}  {child.messages} messages  {clip(child.conversation.title or '', 60)}"
                )
            )
    return Group(*parts)


def ingest_summary(report: IngestReport, console: Console, *, max_issues: int = 20) -> None:
    """Per-format table, totals and the first issues of an import."""
    columns = [Column("format", "id")]
    columns += [
        Column(name, drop=drop, justify="right")
        for name, drop in (
            ("units", 1),
            ("conversations", 0),
            ("messages", 4),
            ("tool calls", 3),
            ("sub-agents", 2),
            ("written", 2),
            ("unchanged files", 1),
        )
    ]
    rows: list[list[str | Text]] = [
        [
            name,
            str(stats.units),
            str(stats.conversations),
            str(stats.messages),
            str(stats.tool_calls),
            str(stats.subagents),
            str(stats.written),
            str(stats.skipped_unchanged),
        ]
        for name, stats in sorted(report.by_format.items())
    ]
    table = fitted_table(columns, rows, width=console.width, title="Imported")
    if report.by_format:
        console.print(table)
    line = (
        f"{report.conversations_written} conversation(s) written · "
        f"{report.sources_added} new, {report.sources_revised} revised, "
        f"{report.sources_unchanged} unchanged sources"
    )
    console.print(line)
    if report.redactions:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(report.redactions_by_kind.items()))
        console.print(
            Text(f"{report.redactions} secret(s) redacted before storage ({kinds})", style="yellow")
        )
    if report.truncated:
        console.print(f"{report.truncated} oversized tool output(s) stored truncated")
    if report.skipped_files:
        console.print(
            Text(
                f"{report.skipped_files} file(s) in the folders are not transcripts and were left alone",
                style="dim",
            )
        )
    if report.issues:
        errors = len(report.errors)
        console.print(
            Text(
                f"{errors} error(s), {len(report.issues) - errors} warning(s):",
                style="red" if errors else "yellow",
            )
        )
        for issue in report.issues[:max_issues]:
            console.print(
                Text(
                    f"  {issue.severity}: {issue}",
                    style="red" if issue.severity == "error" else "yellow",
                )
            )
        if len(report.issues) > max_issues:
            console.print(f"  … and {len(report.issues) - max_issues} more (`--json` lists all)")
