"""``proctor init``: create the state folder and the database."""

from __future__ import annotations

import click

from proctor._util.paths import proctor_home
from proctor.cli._common import console, writable_store
from proctor.store import database_exists, database_location, head_revision


@click.command()
def init() -> None:
    """Create $PROCTOR_HOME and its database (safe to run again)."""
    existed = database_exists()
    with writable_store() as store:
        counts = store.counts()
    verb = "Using existing" if existed else "Created"
    console.print(f"{verb} database {database_location()} (schema {head_revision()})")
    console.print(f"Home: {proctor_home()} · {counts.conversations} conversations stored")
    console.print(
        "Next: `proctor ingest PATH…` (or `proctor ingest` to import your own agent sessions)"
    )
