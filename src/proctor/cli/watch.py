"""``proctor watch``: follow agent session folders and import changes as they happen."""

from __future__ import annotations

import threading
from pathlib import Path

import click

from proctor._util.clock import utcnow
from proctor.cli._common import console, writable_store
from proctor.cli._render import when
from proctor.errors import ConfigError
from proctor.ingest import IngestReport, Watcher, default_session_folders


@click.command("watch")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--project", help="Put every imported conversation in this project.")
def watch_command(folders: tuple[Path, ...], project: str | None) -> None:
    """Follow Claude Code / Codex session folders and import lines as they are appended.

    With no FOLDER, follows ~/.claude/projects and ~/.codex/sessions when they exist.
    Stop with Ctrl-C.
    """
    chosen = list(folders) or default_session_folders()
    if not chosen:
        raise ConfigError(
            "no folder given and no agent session folders found; name the folders to follow"
        )

    def report(result: IngestReport) -> None:
        if not (result.conversations_written or result.issues):
            return
        line = (
            f"{when(utcnow())}  {result.conversations_written} conversation(s) updated · "
            f"{result.sources_added} new, {result.sources_revised} revised sources"
        )
        if result.issues:
            line += f" · {len(result.issues)} issue(s)"
        console.print(line, markup=False)
        for issue in result.errors[:5]:
            console.print(f"  error: {issue}", markup=False)

    stop = threading.Event()
    console.print(
        "Following " + ", ".join(str(f) for f in chosen) + " (Ctrl-C to stop)", markup=False
    )
    with writable_store() as store:
        try:
            Watcher(store, chosen, project=project).run(report, stop)
        except KeyboardInterrupt:
            stop.set()
    console.print("Stopped.")
