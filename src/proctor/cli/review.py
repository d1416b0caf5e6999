"""``proctor review``: run the review pipeline and control its runs (SPEC REV-1, REV-5…7).

``run`` reads what is new or changed since the last review of the scope and publishes a
result with its story graph (``proctor graph show``). Reviews are part of the supervisor
app, which is off until ``proctor app enable`` (SPEC HB-1). Without a model connection it
publishes the structural graph and says the semantic layer was skipped. Exit status of
``run``: 0 the run completed or found nothing new; 1 it ended failed, paused or
cancelled; 2 BUSY (another review holds the slot) or a setting to fix; 130 interrupted
(the run is paused and can be resumed).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import click
from rich.text import Text

from proctor._util.clock import utcnow
from proctor.cli._common import console, err_console, json_option, print_json, writable_store
from proctor.cli._exit import EXIT_PARTIAL, EXIT_USAGE
from proctor.errors import BusyError
from proctor.heartbeat import require_app
from proctor.review import (
    ReviewRequest,
    cancel_review,
    no_change_reason,
    open_semantic_layer,
    pause_review,
    resume_review,
    start_review,
)

if TYPE_CHECKING:
    from rich.progress import Progress

    from proctor.store import ReviewRunRecord, SqlStore

_AGO = re.compile(r"^\s*(\d+)\s*(m|h|d|w)\s*$")
_UNIT = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class When(click.ParamType[datetime, Any]):
    """An ISO date or time (``2026-11-20``, ``2026-11-20T09:00``) or an age (``24h``, ``7d``)."""

    name = "time"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value)
        match = _AGO.match(text)
        if match is not None:
            return utcnow() - timedelta(**{_UNIT[match.group(2)]: int(match.group(1))})
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"{text!r} is not a date, a time or an age like 24h or 7d", param, ctx)
        return parsed if parsed.tzinfo is not None else parsed.astimezone()


@click.group("review")
def review() -> None:
    """Review conversations into the story graph; pause, resume and cancel runs."""


@review.command("run")
@click.option(
    "--project", "--scope", "project", help="Review one project (default: every project)."
)
@click.option("--since", type=When(), help="Only sources from this time on (date, time or 7d).")
@click.option("--until", type=When(), help="Only sources before this time.")
@click.option(
    "--reanalyze",
    is_flag=True,
    help="Re-read the whole range, ignoring checkpoints (they are neither read nor moved).",
)
@click.option("--model", "connection", help="Model connection for the semantic layer.")
@click.option("--no-model", is_flag=True, help="Structural layer only, even with a connection.")
@click.option(
    "--batch-size", type=click.IntRange(5, 500), default=150, show_default=True,
    help="At most this many sources per batch (one model call each).",
)  # fmt: skip
@json_option()
def run_command(
    project: str | None,
    since: datetime | None,
    until: datetime | None,
    reanalyze: bool,
    connection: str | None,
    no_model: bool,
    batch_size: int,
    as_json: bool,
) -> None:
    """Review what is new or changed and publish a result with its story graph.

    A run that finds nothing to read says why: the scope holds no sources, --since/--until
    leave none of them in range, or nothing is new since the last review of the scope.
    """
    request = ReviewRequest(
        project=project, since=since, until=until, reanalyze=reanalyze, batch_size=batch_size
    )
    with writable_store() as store:
        require_app(store, "a manual review")
        semantic, note = open_semantic_layer(store, connection, use_model=not no_model)
        try:
            with _progress(as_json) as report:
                run = start_review(
                    store, request, semantic=semantic, semantic_note=note, progress=report
                )
        except BusyError as exc:
            err_console.print(Text(str(exc), style="red"))
            raise SystemExit(EXIT_USAGE) from exc
        _finish(store, run, as_json)


@review.command("resume")
@click.argument("run_id")
@click.option("--model", "connection", help="Model connection for the semantic layer.")
@json_option()
def resume_command(run_id: str, connection: str | None, as_json: bool) -> None:
    """Continue a paused or failed run from its saved batches."""
    with writable_store() as store:
        require_app(store, "resuming a review")
        semantic, _ = open_semantic_layer(store, connection, use_model=True)
        try:
            with _progress(as_json) as report:
                run = resume_review(store, run_id, semantic=semantic, progress=report)
        except BusyError as exc:
            err_console.print(Text(str(exc), style="red"))
            raise SystemExit(EXIT_USAGE) from exc
        _finish(store, run, as_json)


@review.command("pause")
@click.argument("run_id")
def pause_command(run_id: str) -> None:
    """Pause a running review; it stops after the batch in hand and keeps its batches."""
    with writable_store() as store:
        run = pause_review(store, run_id)
    console.print(Text(f"review {run.run_id[:8]}: {run.shown}"))


@review.command("cancel")
@click.argument("run_id")
def cancel_command(run_id: str) -> None:
    """Cancel a review; a cancelled run cannot be resumed."""
    with writable_store() as store:
        run = cancel_review(store, run_id)
    console.print(Text(f"review {run.run_id[:8]}: {run.shown}"))


@review.command("status")
@click.argument("run_id", required=False)
@json_option()
def status_command(run_id: str | None, as_json: bool) -> None:
    """Show one run (default: the newest) with its progress and counters."""
    with writable_store() as store:
        store.fail_interrupted_reviews()
        if run_id is None:
            runs = store.review_runs(limit=1)
            if not runs:
                console.print("No reviews yet. Run `proctor review run`.")
                return
            run = runs[0]
        else:
            run = store.review_run(run_id)
        if as_json:
            print_json(_run_json(run, store))
        else:
            _print_run(run, store)


@review.command("list")
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@json_option()
def list_command(limit: int, as_json: bool) -> None:
    """Review runs, newest first."""
    with writable_store() as store:
        store.fail_interrupted_reviews()
        runs = store.review_runs(limit=limit)
    if as_json:
        print_json([_run_json(r) for r in runs])
        return
    if not runs:
        console.print("No reviews yet. Run `proctor review run`.")
        return
    from proctor.cli._refs import unique_prefixes
    from proctor.cli._tables import Column, fitted_table

    refs = unique_prefixes([r.run_id for r in runs], 8)
    columns = (
        Column("run", "id"),
        Column("state"),
        Column("scope", "text", least=10),
        Column("trigger", drop=2),
        Column("sources", justify="right", drop=4),
        Column("batches", justify="right", drop=1),
        Column("model calls", justify="right", drop=3),
        Column("started (UTC)", drop=5),
    )
    rows: list[list[str | Text]] = [
        [
            refs[run.run_id],
            run.shown,
            run.scope_key,
            run.trigger + (" · reanalyze" if run.reanalyze else ""),
            f"{run.sources_done}/{run.sources_total}",
            f"{run.batches_done}/{run.batches_total}",
            str(run.model_calls),
            run.created_at.strftime("%Y-%m-%d %H:%M"),
        ]
        for run in runs
    ]
    table = fitted_table(columns, rows, width=console.width, title="Reviews")
    console.print(table)


class _progress:
    """A progress bar over batches on the terminal; silent for --json or pipes.

    rich's progress bar (live display, spinners, tables) is imported only for a terminal:
    the heartbeat's no-change review, piped or scheduled, does not load it."""

    def __init__(self, quiet: bool) -> None:
        self._bar: Progress | None = None
        self._task: Any = None
        if not quiet and err_console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("reviewing"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("batches"),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            )

    def __enter__(self) -> Any:
        if self._bar is None:
            return None
        self._bar.__enter__()
        return self._report

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def _report(self, run: ReviewRunRecord) -> None:
        assert self._bar is not None
        if self._task is None:
            self._task = self._bar.add_task("review", total=run.batches_total)
        self._bar.update(self._task, completed=run.batches_done, total=run.batches_total)


def _finish(store: SqlStore, run: ReviewRunRecord, as_json: bool) -> None:
    if as_json:
        print_json(_run_json(run, store))
    else:
        _print_run(run, store)
        if run.result_id is not None:
            console.print(Text(f"Browse it: proctor graph show {run.result_id[:8]}", style="bold"))
    if run.status not in ("completed", "no_change"):
        raise SystemExit(EXIT_PARTIAL)


def _run_json(run: ReviewRunRecord, store: SqlStore | None = None) -> dict[str, Any]:
    """A run as JSON; with ``store``, a run that read nothing says why (``note``)."""
    data = asdict(run)
    data["shown"] = run.shown
    if store is not None:
        data["note"] = no_change_reason(store, run) if run.status == "no_change" else None
    return data


def _print_run(run: ReviewRunRecord, store: SqlStore) -> None:
    style = {"completed": "green", "no_change": "green", "failed": "red"}.get(run.status, "yellow")
    console.print(
        Text.assemble(
            (f"review {run.run_id[:8]} ", "bold"),
            (run.shown, style),
            f" · {run.scope_key} · {run.trigger}" + (" · reanalyze" if run.reanalyze else ""),
        )
    )
    if run.status == "no_change":
        console.print(Text(no_change_reason(store, run)))
    console.print(
        f"sources read {run.sources_done} of {run.sources_total} · batches "
        f"{run.batches_done} of {run.batches_total} · model calls {run.model_calls} "
        f"({run.input_tokens} input / {run.output_tokens} output tokens)"
    )
    note = run.options.get("semantic_note")
    if run.model is None and note:
        console.print(Text(f"semantic layer skipped: {note}"))
    if run.error:
        console.print(Text(f"error: {run.error}", style="red"))
    if run.status in ("paused", "failed") and run.result_id is None:
        console.print(Text(f"Resume it: proctor review resume {run.run_id[:8]}"))
