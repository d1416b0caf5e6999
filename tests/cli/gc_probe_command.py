"""A command module for tests/cli/test_collection.py: records whether the garbage
collector ran collections while it was imported."""

from __future__ import annotations

import gc

import click

ENABLED_AT_IMPORT = gc.isenabled()


@click.command()
def probe() -> None:
    """Print whether collections ran while this module was imported, and whether they do now."""
    click.echo(f"import {ENABLED_AT_IMPORT} run {gc.isenabled()}")
