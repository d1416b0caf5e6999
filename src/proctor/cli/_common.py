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
from rich.console import Console, ConsoleDimensions

from proctor.store import ReadStore, SqlStore, open_store

PIPE_WIDTH = 140
"""Piped output (make demo in CI, `| less`) gets a readable width instead of rich's 80."""


def _width(stream: Any) -> int | None:
    if os.environ.get("COLUMNS") or stream.isatty():
        return None  # rich reads $COLUMNS, else the terminal
    return PIPE_WIDTH


class _Console(Console):
    """A console that measures its width when it prints, not when Proctor started.

    ``$COLUMNS`` and the terminal are read at every print, so a resized terminal (or a
    test that sets ``COLUMNS``) is honoured; a pipe gets ``PIPE_WIDTH``.
    """

    @property
    def size(self) -> ConsoleDimensions:
        self._width = _width(self.file)
        return super().size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


console = _Console(highlight=False, soft_wrap=True)
err_console = _Console(stderr=True, highlight=False, soft_wrap=True)


@contextmanager
def writable_store() -> Iterator[SqlStore]:
    """The store of the current home, opened for writing (created and migrated if needed)."""
    store = open_store()
    try:
        yield store
    finally:
        store.close()


@contextmanager
def readable_store() -> Iterator[ReadStore]:
    """The store of the current home, read-only: no write methods, and the database
    refuses writes through its connections (SQLite ``mode=ro``, PostgreSQL read-only
    transactions)."""
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
