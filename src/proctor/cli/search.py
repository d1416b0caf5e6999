"""``proctor search``: ranked hits over messages, tool calls and graph objects (REV-14)."""

from __future__ import annotations

from collections.abc import Sequence

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from proctor.cli._common import (
    console,
    err_console,
    json_option,
    print_json,
    readable_store,
    writable_store,
)
from proctor.search import Encoder, IndexReport, SearchResult, index_sources, search
from proctor.store import SqlStore


@click.command("search")
@click.argument("query")
@click.option("--project", metavar="NAME", help="Only this project.")
@click.option("--conversation", "conversation", metavar="ID", help="Only this conversation.")
@click.option(
    "--type",
    "doc_types",
    multiple=True,
    metavar="TYPE",
    help="Only this document type: message, tool_call, entity, event, story_line … (repeatable).",
)
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option(
    "--full-text", is_flag=True, help="Rank by full text only, even when embeddings are installed."
)
@click.option(
    "--no-refresh",
    is_flag=True,
    help="Search the index as it is (read-only) instead of indexing new messages first.",
)
@json_option()
def search_command(
    query: str,
    project: str | None,
    conversation: str | None,
    doc_types: Sequence[str],
    limit: int,
    full_text: bool,
    no_refresh: bool,
    as_json: bool,
) -> None:
    """Search messages, tool calls and graph objects; each hit names its source.

    Full text and sentence embeddings (the `embeddings` extra) are ranked together;
    without the extra the search uses full text only and says so. New and changed
    messages are indexed first (the first search embeds every message; later ones only
    what changed).
    """
    encoder: Encoder = None if full_text else "auto"
    if no_refresh:
        with readable_store() as store:
            result = _search(store, query, project, conversation, doc_types, limit, encoder)
    else:
        with writable_store() as store:
            report = _refresh(store, encoder)
            if report.added or report.updated or report.removed:
                err_console.print(_index_line(report), markup=False)
            result = _search(store, query, project, conversation, doc_types, limit, encoder)
    if as_json:
        print_json(result.as_json())
        return
    _print(result)


def _search(
    store: SqlStore,
    query: str,
    project: str | None,
    conversation: str | None,
    doc_types: Sequence[str],
    limit: int,
    encoder: Encoder,
) -> SearchResult:
    conversation_id = store.resolve_conversation_id(conversation) if conversation else None
    return search(
        store,
        query,
        project=project,
        conversation_id=conversation_id,
        doc_types=list(doc_types) or None,
        limit=limit,
        encoder=encoder,
    )


def _refresh(store: SqlStore, encoder: Encoder) -> IndexReport:
    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not err_console.is_terminal,
        transient=True,
    ) as bar:
        task = bar.add_task("indexing", total=None)
        return index_sources(
            store,
            encoder=encoder,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _index_line(report: IndexReport) -> str:
    return (
        f"Indexed {report.added} new and {report.updated} changed document(s), "
        f"removed {report.removed}; {report.embedded} embedded in {report.seconds:.1f} s"
    )


def _print(result: SearchResult) -> None:
    if result.mode == "full_text":
        err_console.print(f"Full text only: {result.note}.", markup=False)
    if not result.hits:
        console.print("No matches.", markup=False)
        return
    table = Table(show_lines=False, title_justify="left")
    for column, justify in (
        ("#", "right"),
        ("score", "right"),
        ("type", "left"),
        ("when", "left"),
        ("hit", "left"),
        ("source", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for hit in result.hits:
        who = hit.author or hit.title or ""
        line = Text(f"{who}: " if who else "", style="bold")
        line.append(hit.excerpt)
        refs = hit.source_refs[:2]
        source = "\n".join(
            f"{ref.conversation_id} {ref.source_id}" if ref.conversation_id else ref.source_id
            for ref in refs
        )
        if len(hit.source_refs) > len(refs):
            source += f"\n+{len(hit.source_refs) - len(refs)} more"
        table.add_row(
            str(hit.rank),
            f"{hit.score:.3f}",
            hit.doc_type,
            hit.occurred_at.strftime("%Y-%m-%d %H:%M") if hit.occurred_at else "",
            line,
            Text(source),
        )
    console.print(table)
