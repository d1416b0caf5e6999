"""``proctor suggestions``: list, accept, ignore and retry suggestions (HB-5, HB-6)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, writable_store
from proctor.cli._refs import unique_prefixes
from proctor.cli._tables import Column, fitted_table
from proctor.errors import NotFoundError
from proctor.heartbeat.suggestions import (
    SuggestionOutcome,
    accept_suggestion,
    ignore_suggestion,
    open_phrasing,
    retry_result_suggestions,
    retry_suggestions,
)
from proctor.store import Decision


@click.group("suggestions")
def suggestions() -> None:
    """Suggestions from what reviews changed: list, accept, ignore, retry."""


@suggestions.command("list")
@click.option("--all", "show_all", is_flag=True, help="Accepted and ignored ones too.")
@click.option("--project", help="Only this project (name or id).")
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
@json_option()
def list_command(show_all: bool, project: str | None, limit: int, as_json: bool) -> None:
    """Open suggestions, newest first."""
    with writable_store() as store:
        found = store.suggestions(status=None if show_all else "open", project=project, limit=limit)
    if as_json:
        print_json([asdict(s) for s in found])
        return
    if not found:
        console.print("No suggestions." if show_all else "No open suggestions.")
        return
    refs = unique_prefixes([s.suggestion_id for s in found], 8)
    columns = (
        Column("id", "id"),
        Column("kind", drop=3),
        Column("status", drop=2),
        Column("suggestion", "text", least=24),
        Column("sources", justify="right", drop=1),
        Column("updated (UTC)", drop=1),
    )
    rows: list[list[str | Text]] = [
        [
            refs[s.suggestion_id],
            s.kind.replace("_", " "),
            s.status,
            Text.assemble((s.title, "bold"), "\n", s.text),
            str(len(s.evidence)),
            s.updated_at.strftime("%Y-%m-%d %H:%M"),
        ]
        for s in found
    ]
    table = fitted_table(columns, rows, width=console.width, title="Suggestions")
    console.print(table)


@suggestions.command("accept")
@click.argument("suggestion_id")
@json_option()
def accept_command(suggestion_id: str, as_json: bool) -> None:
    """Accept: an open item becomes a paused task; a convention is confirmed and remembered."""
    with writable_store() as store:
        decision = accept_suggestion(store, suggestion_id)
    _print_decision(decision, "accepted", as_json)


@suggestions.command("ignore")
@click.argument("suggestion_id")
@json_option()
def ignore_command(suggestion_id: str, as_json: bool) -> None:
    """Ignore: it comes back only when new evidence appears."""
    with writable_store() as store:
        decision = ignore_suggestion(store, suggestion_id)
    _print_decision(decision, "ignored", as_json)


@suggestions.command("retry")
@click.argument("run_or_result_id")
@click.option("--model", "connection", help="Model connection for the phrasing call.")
@json_option()
def retry_command(run_or_result_id: str, connection: str | None, as_json: bool) -> None:
    """Make the suggestions of a heartbeat run (or of any result) again; the result stays."""
    with writable_store() as store:
        phrasing = open_phrasing(store, connection)
        try:
            store.heartbeat_run(run_or_result_id)
        except NotFoundError:
            outcome = retry_result_suggestions(store, run_or_result_id, phrasing)
        else:
            outcome = retry_suggestions(store, run_or_result_id, phrasing)
    if as_json:
        print_json({**asdict(outcome), "open_now": outcome.open_now})
        return
    _print_outcome(outcome, phrased=phrasing is not None)


def _print_decision(decision: Decision, verb: str, as_json: bool) -> None:
    if as_json:
        print_json(asdict(decision))
        return
    s = decision.suggestion
    head = f"suggestion {s.suggestion_id[:8]} "
    if not decision.changed:
        console.print(Text(head + f"was already {verb}; nothing changed."))
        return
    console.print(Text.assemble((head + verb, "green"), ": ", s.title))
    if decision.task is not None:
        console.print(Text(f"task {decision.task.task_id[:8]} created, paused: {s.title}"))
    if decision.confirmed_entity_id is not None:
        console.print(Text(f"entity {decision.confirmed_entity_id[:8]} confirmed"))
    if decision.memory is not None:
        console.print(Text(f"memory {decision.memory.memory_id[:8]} recorded"))


def _print_outcome(outcome: SuggestionOutcome, *, phrased: bool) -> None:
    if outcome.candidates == 0:
        console.print("No suggestion candidates in that result: no model call was made.")
        return
    parts: list[Any] = [
        f"{outcome.candidates} candidates · {outcome.created} new · {outcome.reopened} back "
        f"· {outcome.refreshed} refreshed · model calls {outcome.calls}"
    ]
    if not phrased:
        parts.append(" (no model connection: rule text only)")
    console.print(Text("".join(parts)))
    console.print(Text("See them: proctor suggestions list", style="bold"))
