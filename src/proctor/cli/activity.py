"""``proctor activity``: what the heartbeat and manual reviews did, newest first (SPEC HB-7).

One list: each heartbeat run with the review it triggered, and each manual review — status,
phase, scope, times, error, summary and result id. A review that found nothing new reads
"no change (no model call)". Listing never starts or changes anything.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click
from rich.text import Text

from proctor._util.text import one_line
from proctor.cli._common import console, json_option, print_json, readable_store
from proctor.cli._refs import unique_prefixes
from proctor.cli._tables import Column, fitted_table
from proctor.heartbeat import ActivityEntry
from proctor.store import ACTIVITY_MAX_LIMIT, ACTIVITY_MAX_OFFSET

_SUMMARY_CHARS = 100


@click.command("activity")
@click.option("--plan", help="Only this plan's heartbeat runs (name or id).")
@click.option(
    "--limit", type=click.IntRange(1, ACTIVITY_MAX_LIMIT), default=20, show_default=True,
    help="At most this many entries.",
)  # fmt: skip
@click.option(
    "--offset", type=click.IntRange(0, ACTIVITY_MAX_OFFSET), default=0, show_default=True,
    help="Skip this many (newest) entries first.",
)  # fmt: skip
@json_option()
def activity_command(plan: str | None, limit: int, offset: int, as_json: bool) -> None:
    """Heartbeat runs with their reviews, and manual reviews, newest first."""
    with readable_store() as store:
        entries = store.activity(plan, limit=limit, offset=offset)
    if as_json:
        print_json([_entry_json(entry) for entry in entries])
        return
    if not entries:
        console.print("No activity yet." if offset == 0 else "No more activity.")
        return
    refs = unique_prefixes([e.result_id for e in entries if e.result_id], 8)
    columns = (
        Column("started (UTC)"),
        Column("kind", drop=3),
        Column("plan", "text", drop=2, least=8),
        Column("scope", "text", drop=4, least=8),
        Column("outcome", "text", least=10),
        Column("phase", drop=1),
        Column("calls", justify="right", drop=1),
        Column("result", "id"),
        Column("summary / error", "text", drop=5, least=16),
    )
    rows: list[list[str | Text]] = []
    for entry in entries:
        detail = Text(_short(entry.summary or ""))
        if entry.error:
            detail = Text(_short(entry.error), style="red")
        rows.append(
            [
                entry.started_at.strftime("%Y-%m-%d %H:%M"),
                entry.kind,
                entry.plan_name or "—",
                entry.scope,
                entry.outcome,
                entry.phase or "—",
                str(entry.model_calls),
                refs[entry.result_id] if entry.result_id else "",
                detail,
            ]
        )
    table = fitted_table(columns, rows, width=console.width, title="Activity")
    console.print(table)


def _short(text: str) -> str:
    return one_line(text, _SUMMARY_CHARS)


def _entry_json(entry: ActivityEntry) -> dict[str, Any]:
    data = asdict(entry)
    data["outcome"] = entry.outcome
    return data
