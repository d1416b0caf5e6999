"""The import's plain ``executemany`` writes the very rows SQLAlchemy's statements write.

The reference path is what the writer did before it bound rows itself:
``connection.execute(insert(table), rows)`` (``ON CONFLICT DO NOTHING`` for sources),
each row a dict (the writer's tuples of a table's columns are made dicts for it).
Both import the same files — every shared transcript, sessions made from a real one, files
with planted secrets and reasoning in every format — then import them again after edits
(new revisions, updated sources, appended lines), and every stored row is compared.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from proctor.ingest import ingest
from proctor.store import _writer, open_store
from tests.ingest.copies import session_copies
from tests.ingest.planted import write_all
from tests.ingest.stored_tables import Dump, digest, stored_tables


def reference_insert_rows(
    connection: Connection,
    table: Table,
    rows: Sequence[dict[str, Any]],
    *,
    skip_conflicts: bool = False,
) -> None:
    """How rows were inserted before ``store._bulk``: through SQLAlchemy's statements."""
    if not rows:
        return
    statement: Executable = insert(table)
    if skip_conflicts and connection.dialect.name == "postgresql":
        statement = postgresql.insert(table).on_conflict_do_nothing()
    elif skip_conflicts:
        statement = sqlite.insert(table).on_conflict_do_nothing()
    connection.execute(statement, list(rows))


def reference_insert_values(
    connection: Connection,
    table: Table,
    columns: tuple[str, ...],
    rows: Sequence[tuple[Any, ...]],
    *,
    skip_conflicts: bool = False,
) -> None:
    """``reference_insert_rows`` of rows given as tuples of the values of ``columns``."""
    reference_insert_rows(
        connection,
        table,
        [dict(zip(columns, row, strict=True)) for row in rows],
        skip_conflicts=skip_conflicts,
    )


def _inputs(folder: Path, transcripts_dir: Path) -> Path:
    """The same files at the same place (stored paths name them) for each import."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(transcripts_dir, folder / "shared")
    (folder / "copies").mkdir()
    session_copies(transcripts_dir, folder / "copies", 3)
    (folder / "planted").mkdir()
    write_all(folder / "planted")
    return folder


def _edit(folder: Path) -> None:
    """Change what a second import sees: a reworded line, a changed result, a new line."""
    session = folder / "copies" / "session-0000.jsonl"
    lines = session.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = [line.replace('"text":"', '"text":"edited: ', 1) for line in lines[:5]] + lines[5:]
    lines.append(lines[-1].replace('"uuid":"', '"uuid":"f', 1))
    session.write_text("".join(lines), encoding="utf-8")
    other = folder / "copies" / "session-0001.jsonl"
    other.write_text(other.read_text(encoding="utf-8").replace("true", "false", 3), "utf-8")


def _import_twice(folder: Path, db: Path) -> Dump:
    store = open_store(db)
    try:
        ingest(store, [folder])
        _edit(folder)
        ingest(store, [folder])
        ingest(store, [folder], force=True)  # unchanged sources: nothing to write
    finally:
        store.close()
    return stored_tables(db)


@pytest.mark.slow
def test_every_stored_row_is_the_row_sqlalchemy_statements_store(
    tmp_path: Path, transcripts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "input"
    ours = _import_twice(_inputs(folder, transcripts_dir), tmp_path / "ours.db")
    monkeypatch.setattr(_writer, "insert_rows", reference_insert_rows)
    monkeypatch.setattr(_writer, "insert_values", reference_insert_values)
    reference = _import_twice(_inputs(folder, transcripts_dir), tmp_path / "reference.db")
    assert len(ours["messages"]) > 900
    assert len(ours["source_versions"]) > len(ours["sources"])  # revisions were written
    assert digest(ours) == digest(reference)
    assert ours == reference
