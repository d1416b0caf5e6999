"""``proctor search``: ranked hits over messages, tool calls and graph objects (REV-14).

A search never waits for embeddings: it brings full text up to date (cheap), answers from
what is indexed, hands the embedding of the rest to a detached indexer (``python -m
proctor.search``) when none is at work, and says what the hits may miss.
``--index-only`` finishes the index, with a progress bar, and searches nothing.
"""

from __future__ import annotations

import dataclasses
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
from proctor.search import (
    EmbedReport,
    Encoder,
    IndexReport,
    SearchResult,
    embed_pending,
    hand_off_indexing,
    index_full_text,
    indexer_running,
    load_encoder,
    refresh_postings,
    search,
)
from proctor.store import ReadStore, SqlStore


@click.command("search")
@click.argument("query", required=False)
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
@click.option(
    "--index-only",
    is_flag=True,
    help="Bring the whole index up to date (every embedding; minutes on a large store) "
    "and search nothing.",
)
@json_option()
def search_command(
    query: str | None,
    project: str | None,
    conversation: str | None,
    doc_types: Sequence[str],
    limit: int,
    full_text: bool,
    no_refresh: bool,
    index_only: bool,
    as_json: bool,
) -> None:
    """Search messages, tool calls and graph objects; each hit names its source.

    Full text and sentence embeddings (the `embeddings` extra) are ranked together;
    without the extra the search uses full text only and says so. New and changed
    messages are indexed for full text first; documents still without an embedding rank
    by full text until a background indexer embeds them (started here when none is at
    work; `proctor serve`, `proctor mcp` and `proctor watch` run their own; `--index-only`
    embeds them all now). The answer says when the hits may be incomplete.
    """
    encoder: Encoder = None if full_text else "auto"
    if index_only:
        if query is not None:
            raise click.UsageError("--index-only searches nothing: leave out the query")
        with writable_store() as store:
            _index_everything(store, encoder, as_json)
        return
    if query is None:
        raise click.UsageError("give a query (words or a question), or --index-only")
    if no_refresh:
        with readable_store() as store:
            result = _search(store, query, project, conversation, doc_types, limit, encoder)
    else:
        with writable_store() as store:
            report = _full_text(store)
            if report.added or report.updated or report.removed:
                err_console.print(_index_line(report), markup=False)
            result = _search(store, query, project, conversation, doc_types, limit, encoder)
            if encoder is not None:
                result = _hand_off(store, result)
    if as_json:
        print_json(result.as_json())
        return
    _print(result)


def _search(
    store: ReadStore,
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


def _hand_off(store: SqlStore, result: SearchResult) -> SearchResult:
    """Start a detached indexer for what is not embedded yet; the answer says one is at it."""
    started = hand_off_indexing(store)
    if not result.index.stale:
        return result
    working = started is not None or indexer_running(store)
    return dataclasses.replace(
        result, index=result.index.with_indexer(indexing=working, error=None)
    )


def _bar(label: str) -> Progress:
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not err_console.is_terminal,
        transient=True,
    )


def _full_text(store: SqlStore) -> IndexReport:
    with _bar("indexing") as bar:
        task = bar.add_task("indexing", total=None)
        return index_full_text(
            store, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )


def _embed(store: SqlStore, *, seconds: float | None) -> EmbedReport | None:
    encoder = load_encoder()
    if encoder is None:
        return None
    with _bar("embedding") as bar:
        task = bar.add_task("embedding", total=None)
        return embed_pending(
            store,
            encoder,
            seconds=seconds,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _index_everything(store: SqlStore, encoder: Encoder, as_json: bool) -> None:
    report = _full_text(store)
    postings = refresh_postings(store)
    embedded = _embed(store, seconds=None) if encoder is not None else None
    if as_json:
        print_json(
            {
                "documents": report.documents,
                "added": report.added,
                "updated": report.updated,
                "removed": report.removed,
                "embedded": None if embedded is None else embedded.embedded,
                "remaining": None if embedded is None else embedded.remaining,
                "postings_built": postings.built,
            }
        )
        return
    console.print(_index_line(report), markup=False)
    if postings.built:
        console.print(
            f"Kept the postings of {postings.words} common word(s) "
            f"({postings.postings:,} documents in all) in {postings.seconds:.1f} s.",
            markup=False,
        )
    if embedded is None:
        console.print("Full text only: no embeddings were made.", markup=False)
    else:
        console.print(
            f"Embedded {embedded.embedded} document(s) in {embedded.seconds:.1f} s; "
            f"{embedded.remaining} left without a vector.",
            markup=False,
        )


def _index_line(report: IndexReport) -> str:
    return (
        f"Indexed {report.added} new and {report.updated} changed document(s), "
        f"removed {report.removed}, in {report.seconds:.1f} s"
    )


def _print(result: SearchResult) -> None:
    if result.mode == "full_text":
        err_console.print(f"Full text only: {result.note}.", markup=False)
    note = result.index.note()
    if note is not None:
        err_console.print(f"Index incomplete: {note}", markup=False)
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
