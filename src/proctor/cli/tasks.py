"""``proctor tasks``: the tasks accepted suggestions made (HB-6), so none is write-only."""

from __future__ import annotations

from dataclasses import asdict

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, readable_store
from proctor.cli._refs import unique_prefixes
from proctor.cli._tables import Column, fitted_table


@click.group("tasks")
def tasks() -> None:
    """Tasks people took on by accepting suggestions (they start paused)."""


@tasks.command("list")
@click.option("--project", help="Only this project (name or id).")
@click.option("--limit", type=click.IntRange(1, 500), default=100, show_default=True)
@json_option()
def list_command(project: str | None, limit: int, as_json: bool) -> None:
    """Tasks, newest first, each with the suggestion that made it."""
    with readable_store() as store:
        found = store.user_tasks(project=project, limit=limit)
    if as_json:
        print_json([asdict(task) for task in found])
        return
    if not found:
        console.print(
            "No tasks. Accepting an open-item suggestion (`proctor suggestions accept ID`) "
            "makes one."
        )
        return
    refs = unique_prefixes([task.task_id for task in found], 8)
    columns = (
        Column("id", "id"),
        Column("status", drop=2),
        Column("task", "text", least=24),
        Column("suggestion", drop=1),
        Column("created (UTC)", drop=3),
    )
    rows: list[list[str | Text]] = [
        [
            refs[task.task_id],
            task.status,
            Text.assemble((task.title, "bold"), *(("\n", task.detail) if task.detail else ())),
            (task.suggestion_id or "")[:8],
            task.created_at.strftime("%Y-%m-%d %H:%M"),
        ]
        for task in found
    ]
    console.print(fitted_table(columns, rows, width=console.width, title="Tasks"))
