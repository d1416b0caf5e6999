"""What every command shares: consoles, opening the store, JSON output, exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import click
import orjson
from rich.console import Console

from proctor.store import SqlStore, open_store


def _width(stream: Any) -> int | None:
    # Piped output (make demo in CI, `| less`) gets a readable width instead of rich's 80.
    if os.environ.get("COLUMNS") or stream.isatty():
        return None
    return 140


console = Console(highlight=False, soft_wrap=True, width=_width(sys.stdout))
err_console = Console(stderr=True, highlight=False, soft_wrap=True, width=_width(sys.stderr))


@contextmanager
def writable_store() -> Iterator[SqlStore]:
    """The store of the current home, opened for writing (created and migrated if needed)."""
    store = open_store()
    try:
        yield store
    finally:
        store.close()


@contextmanager
def readable_store() -> Iterator[SqlStore]:
    """The store of the current home, read-only."""
    store = open_store(read_only=True)
    try:
        yield store
    finally:
        store.close()


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def print_json(value: Any) -> None:
    """Write ``value`` as indented JSON to standard output."""
    data = orjson.dumps(
        value, default=_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    )
    sys.stdout.write(data.decode() + "\n")


FuncT = TypeVar("FuncT", bound=Callable[..., Any])


def json_option() -> Callable[[FuncT], FuncT]:
    """The ``--json`` flag every listing command takes."""
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
