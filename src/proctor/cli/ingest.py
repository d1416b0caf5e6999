"""``proctor ingest``: import transcript files and folders."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import click
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from proctor.cli._common import (
    console,
    err_console,
    json_option,
    print_json,
    writable_store,
)
from proctor.cli._exit import EXIT_PARTIAL
from proctor.cli._render import ingest_summary
from proctor.cli.supervise import outcome_line
from proctor.errors import ConfigError
from proctor.ingest import IngestReport, default_session_folders, ingest_plan
from proctor.notify import hand_off_webhooks
from proctor.sources import Limits, default_adapters, plan_import
from proctor.store import ImportRecord
from proctor.supervision import on_conversations_changed

FORMATS = [adapter.name for adapter in default_adapters()]


_EPILOG = "\b\nFormats (recognised by content):\n" + "\n".join(
    f"  {a.name:<17} {a.description}" for a in default_adapters()
)


def _choose_default_folders(assume_yes: bool) -> list[Path]:
    folders = default_session_folders()
    if not folders:
        raise ConfigError(
            "no path given and no agent session folders found (~/.claude/projects, ~/.codex/sessions); "
            "give the files or folders to import"
        )
    listing = "\n".join(f"  {folder}" for folder in folders)
    if assume_yes:
        return folders
    if not sys.stdin.isatty():
        raise ConfigError(
            f"no path given; found your agent session folders:\n{listing}\n"
            "run `proctor ingest --yes` to import them, or name the paths to import"
        )
    console.print(f"Found your agent session folders:\n{listing}")
    if not click.confirm("Import them?", default=True):
        raise click.Abort()
    return folders


def report_json(report: IngestReport) -> dict[str, object]:
    """The ``--json`` shape of an import report."""
    data = asdict(report)
    data["status"] = report.status
    data["issues"] = [
        {"path": i.path, "line": i.line, "severity": i.severity, "reason": i.reason}
        for i in report.issues
    ]
    return data


def interrupted_line(earlier: ImportRecord) -> str:
    """What to say about an earlier import found interrupted."""
    paths = ", ".join(earlier.paths) or "(no paths)"
    return (
        f"Import {earlier.import_id[:8]} of {paths} (started "
        f"{earlier.started_at:%Y-%m-%d %H:%M} UTC) was interrupted: its process stopped "
        "before it finished. Every conversation it wrote is whole; importing the same "
        "paths again writes the rest."
    )


@click.command("ingest", epilog=_EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--project", help="Put every imported conversation in this project.")
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMATS),
    help="Read every file with this adapter instead of detecting the format.",
)
@click.option(
    "--force", is_flag=True, help="Re-read files even when unchanged since the last import."
)
@click.option(
    "--max-tool-output",
    type=click.IntRange(min=1024),
    default=Limits().max_tool_output_chars,
    show_default=True,
    help="Characters of a tool output to keep; longer outputs are stored truncated.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 16),
    help="Processes reading files, this one included (default: 1 for small imports, up "
    "to 4 for large ones; N starts N - 1 workers).",
)
@click.option(
    "--yes",
    "-y",
    "assume_yes",
    is_flag=True,
    help="With no PATH: import the default session folders.",
)
@json_option()
@click.pass_context
def ingest_command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    project: str | None,
    format_name: str | None,
    force: bool,
    max_tool_output: int,
    jobs: int | None,
    assume_yes: bool,
    as_json: bool,
) -> None:
    """Import transcripts from files or folders (formats are recognised by content).

    With no PATH, offers your Claude Code and Codex session folders.
    Re-importing unchanged files writes nothing; changed messages get a new revision.
    Exit status: 0 all imported, 1 some input could not be read (the rest was imported).

    An import whose process was killed before it finished is marked interrupted when the
    next import starts, which names it; every conversation it wrote is whole.
    """
    chosen = list(paths) or _choose_default_folders(assume_yes)
    limits = Limits(max_tool_output_chars=max_tool_output)
    plan = plan_import(chosen, default_adapters(), format_name=format_name)
    total = sum(path.stat().st_size for _, unit in plan.units for path in unit.paths)
    with writable_store() as store:
        show_progress = not as_json and err_console.is_terminal
        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=err_console,
            disable=not show_progress,
            transient=True,
        ) as bar:
            task = bar.add_task("importing", total=total or None)

            def advance(size: int, path: str) -> None:
                bar.update(task, advance=size, description=Path(path).name[:40])

            report = ingest_plan(
                store,
                plan,
                paths=tuple(str(p) for p in chosen),
                project=project,
                format_name=format_name,
                limits=limits,
                progress=advance,
                force=force,
                jobs=jobs,
            )
        supervised = on_conversations_changed(store, report.conversation_ids)
        hand_off_webhooks(store)  # detached: the import never waits for a receiver
        from proctor.search import hand_off_indexing

        hand_off_indexing(store)  # detached: the import never waits for embeddings
    if as_json:
        print_json({**report_json(report), "supervision": [outcome_line(o) for o in supervised]})
    else:
        for earlier in report.interrupted:
            console.print(interrupted_line(earlier), markup=False, style="yellow")
        ingest_summary(report, console)
        for outcome in supervised:
            console.print(outcome_line(outcome), markup=False)
    if report.errors:
        ctx.exit(EXIT_PARTIAL)
