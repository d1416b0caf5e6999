"""``proctor conversations list`` and ``show`` read through a read-only store: the database
refuses a write sent through it (SQLite ``mode=ro``; PostgreSQL read-only transactions).
Run on both backends (``PROCTOR_TEST_BACKEND=postgresql``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import delete
from sqlalchemy.exc import DBAPIError

import proctor.cli.conversations as conversations_cli
from proctor.cli.main import cli
from proctor.errors import StoreError
from proctor.store import ReadStore, SqlStore, open_store
from proctor.store import tables as t
from tests.trace_world import family_lines, write_jsonl

REFUSED = re.compile(r"readonly database|read-only transaction")
"""SQLite's ``attempt to write a readonly database``; PostgreSQL's ``cannot execute … in a
read-only transaction``."""


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("command", [("list", "--all", "--json"), ("show", "pj:family-done")])
def test_conversations_list_and_show_read_through_a_store_that_refuses_writes(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("ingest", str(write_jsonl(tmp_path / "family.jsonl", family_lines())))
    opened = conversations_cli.readable_store
    seen: list[tuple[ReadStore, str]] = []

    @contextmanager
    def watched() -> Iterator[ReadStore]:
        with opened() as store:
            yield store
            try:
                with store._read() as connection:
                    connection.execute(delete(t.conversations))
                    connection.commit()
            except (StoreError, DBAPIError) as exc:
                seen.append((store, str(exc)))

    monkeypatch.setattr(conversations_cli, "readable_store", watched)
    result = run("conversations", *command)
    assert "pj:family-done" in result.output
    ((store, refusal),) = seen
    assert isinstance(store, ReadStore) and not isinstance(store, SqlStore)
    assert not hasattr(store, "write_conversation") and not hasattr(store, "delete_conversation")
    assert REFUSED.search(refusal), refusal
    writer = open_store()
    try:
        assert writer.counts().conversations >= 1
    finally:
        writer.close()
