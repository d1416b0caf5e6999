"""A publish killed with SIGKILL at any point leaves the old graph or the new one, never a mix
(REV-1, REV-8; STYLE: fault injection for every transaction).

A forked child publishes a large draft into a SQLite file and is killed with a real
``SIGKILL``: either by itself at a random statement of the publish (every point between
``BEGIN IMMEDIATE`` and ``COMMIT``, chosen from a seeded generator so a failure
reproduces), or by the parent at a random moment while the transaction is running.
Afterwards the database opens, passes SQLite's integrity check and holds exactly the old
graph or exactly the new one (row counts and a digest of every graph table's content).
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import select
import shutil
import signal
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import event

from proctor.graph import (
    Checkpoint,
    Coverage,
    EntityChangeFact,
    EntityFact,
    EventFact,
    ExperienceFact,
    OpenItemFact,
    RelationFact,
    ResultDraft,
    StoryLineFact,
    structural_entity_id,
)
from proctor.store import SqlStore, open_store
from proctor.store._engine import create_sqlite_engine
from proctor.store._schema import metadata
from tests.builders import T0
from tests.store.graph_drafts import GRAPH_TABLES, add_conversation, add_run, message

CONVERSATION = "test:conv-1"
SELF_KILLS = 24
TIMED_KILLS = 6
SIZE = 600
"""Entities of each generation: with events, relations, changes and the rest, about 4,000
rows per publish."""
_SKIP = {"created_at", "updated_at", "finished_at", "ref_id", "item_id", "edit_id"}
SEED = 20261120


def large_draft(run_id: str, project_id: str, generation: int, size: int) -> ResultDraft:
    """``size`` entities with events, relations, changes, open items, story lines.

    Generation 2 re-describes half of generation 1's entities, adds new ones, continues its
    story lines (``must_exist``) and resolves its open items: the publish updates as much
    as it inserts.
    """
    cited = (message(CONVERSATION, 0),)
    first = 0 if generation == 1 else size // 2
    numbers = range(first, first + size)

    def entity_id(n: int) -> str:
        return structural_entity_id(project_id, "file", f"src/module_{n}.py")

    def event_id(n: int, generation: int = generation) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"event:{generation}:{n}"))

    entities = tuple(
        EntityFact(
            entity_id(n),
            project_id,
            "file",
            f"src/module_{n}.py",
            f"gen {generation}",
            cited,
            "structural",
            f"src/module_{n}.py",
        )
        for n in numbers
    )
    events = tuple(
        EventFact(
            event_id(n),
            project_id,
            "file_edit",
            f"edit {n}",
            f"gen {generation}",
            T0 + timedelta(seconds=n),
            CONVERSATION,
            cited,
            "structural",
            (entity_id(n), entity_id(first + (n + 1 - first) % size)),
        )
        for n in numbers
    )
    lines = tuple(
        StoryLineFact(
            f"line-{k}",
            f"Thread {k}",
            f"gen {generation}",
            tuple(event_id(n) for n in numbers if n % 20 == k),
            story_line_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"line:{k}")),
            must_exist=generation == 2,
        )
        for k in range(20)
    )
    return ResultDraft(
        result_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"result:{generation}")),
        run_id=run_id,
        scope_key=f"project:{project_id}",
        project_id=project_id,
        time_from=None,
        time_to=None,
        trigger="manual",
        summary=f"generation {generation}",
        change_digest="",
        coverage=Coverage(size, size, 0),
        entities=entities,
        events=events,
        changes=tuple(EntityChangeFact(entity_id(n), "revised", f"gen {generation}", cited, "semantic") for n in numbers if n % 2),
        relations=tuple(RelationFact(entity_id(n), entity_id(first + (n + 7 - first) % size), "depends_on", f"gen {generation}", cited, "structural") for n in numbers),
        open_items=tuple(OpenItemFact(f"failing:{n}:{generation}", project_id, f"failure {n}", "", cited, "structural", (entity_id(n),)) for n in numbers if n % 10 == 0),
        resolved_open_item_keys=tuple(f"failing:{n}:1" for n in range(size) if n % 10 == 0) if generation == 2 else (),
        story_lines=lines,
        experiences=tuple(ExperienceFact(f"lesson {k}", "", (event_id(first + k),)) for k in range(10)),
        checkpoints=tuple(Checkpoint("structural", f"project:{project_id}", "message", f"m{n}", f"{generation:032x}") for n in numbers),
    )  # fmt: skip


def _strip_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_times(v) for k, v in sorted(value.items()) if k not in _SKIP}
    if isinstance(value, list):
        return [_strip_times(v) for v in value]
    return value


@functools.lru_cache(maxsize=64)
def _snapshot_content(raw: str) -> str:
    """A result's snapshot without when its rows were written. Most attempts leave the old
    graph, whose snapshot text is the same every time: it is parsed and walked once (the
    walk was half the test's CPU), a changed text is parsed again."""
    return repr(_strip_times(orjson.loads(raw)))


def graph_state(path: Path) -> tuple[dict[str, int], str]:
    """Row counts and a content digest of every graph table, read with plain sqlite3 (fast,
    and independent of the code under test); when rows were written is left out."""
    h = hashlib.blake2b(digest_size=16)
    rows_per_table: dict[str, int] = {}
    with sqlite3.connect(path) as connection:
        for name in GRAPH_TABLES:
            columns = [c.name for c in metadata.tables[name].c if c.name not in _SKIP]
            listed = ", ".join(columns)
            rows = connection.execute(f"SELECT {listed} FROM {name} ORDER BY {listed}").fetchall()
            rows_per_table[name] = len(rows)
            h.update(f"{name}:{len(rows)}".encode())
            if name == "results":
                rows = [
                    tuple(
                        _snapshot_content(v) if col == "snapshot" else v
                        for col, v in zip(columns, row, strict=True)
                    )
                    for row in rows
                ]
            h.update(repr(rows).encode())  # every row, in order: one repr, not one a row
    return rows_per_table, h.hexdigest()


def _fold_wal(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _store(path: Path) -> SqlStore:
    return SqlStore(
        create_sqlite_engine(path),
        create_sqlite_engine(path, read_only=True),
        description=str(path),
    )


@dataclass(frozen=True)
class Graphs:
    old: Path
    old_digest: str
    old_counts: dict[str, int]
    new_digest: str
    new_counts: dict[str, int]
    draft: ResultDraft
    statements: int
    """Cursor executions of one whole publish (BEGIN … the last statement before COMMIT)."""
    seconds: float


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> Graphs:
    """The database before the publish, and the digest of the same database after it."""
    folder = tmp_path_factory.mktemp("graph-kill")
    old = folder / "old.db"
    store = open_store(old)
    project_id = add_conversation(store, CONVERSATION)
    add_run(store, "run-1", project_id)
    store.publish_result(large_draft("run-1", project_id, 1, SIZE), "completed")
    add_run(store, "run-2", project_id)
    store.close()
    _fold_wal(old)
    old_counts, old_digest = graph_state(old)

    reference = folder / "new.db"
    shutil.copy(old, reference)
    store = _store(reference)
    seen = [0]
    event.listen(
        store._writer, "before_cursor_execute", lambda *_: seen.__setitem__(0, seen[0] + 1)
    )
    draft = large_draft("run-2", project_id, 2, SIZE)
    started = time.perf_counter()
    assert store.publish_result(draft, "completed").published
    seconds = time.perf_counter() - started
    store.close()
    new_counts, new_digest = graph_state(reference)
    assert new_digest != old_digest and new_counts != old_counts
    return Graphs(old, old_digest, old_counts, new_digest, new_counts, draft, seen[0], seconds)


def _child(path: Path, draft: ResultDraft, arm: Callable[[SqlStore, int], None], pipe: int) -> None:
    """Runs in the forked process; never returns."""
    code = 1
    try:
        store = _store(path)
        event.listen(store._writer, "begin", lambda _c: os.write(pipe, b"b"))
        arm(store, pipe)
        store.publish_result(draft, "completed")
        os.write(pipe, b"c")
        code = 0
    finally:
        os._exit(code)


def _killer_at(statement: int) -> Callable[[SqlStore, int], None]:
    """Kill the process before its ``statement``-th cursor execution (negative: at COMMIT)."""

    def arm(store: SqlStore, _pipe: int) -> None:
        seen = [0]

        def before(*_: Any) -> None:
            seen[0] += 1
            if seen[0] == statement:
                os.kill(os.getpid(), signal.SIGKILL)

        def commit(_connection: Any) -> None:
            if statement < 0:
                os.kill(os.getpid(), signal.SIGKILL)

        event.listen(store._writer, "before_cursor_execute", before)
        event.listen(store._writer, "commit", commit)

    return arm


def _run(
    path: Path, draft: ResultDraft, arm: Callable[[SqlStore, int], None], delay: float | None
) -> int:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        _child(path, draft, arm, write)
    os.close(write)
    try:
        if delay is not None:
            ready, _, _ = select.select([read], [], [], 30)
            assert ready, "the child never began its transaction"
            os.read(read, 1)
            # Wait up to ``delay`` for the commit; if it has not come, kill mid-transaction.
            select.select([read], [], [], delay)
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read)
    return status


@pytest.mark.slow
def test_a_publish_killed_at_any_point_leaves_the_old_graph_or_the_new_one(
    graphs: Graphs, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    outcomes: list[str] = []
    plans: list[tuple[str, int | float]] = [
        ("statement", rng.randint(1, graphs.statements)) for _ in range(SELF_KILLS - 2)
    ]
    plans += [("statement", -1), ("statement", 10**9)]  # at COMMIT; never (completes)
    plans += [("timer", rng.uniform(0, graphs.seconds * 1.3)) for _ in range(TIMED_KILLS)]
    for attempt, (how, point) in enumerate(plans):
        path = tmp_path / f"attempt-{attempt}.db"
        shutil.copy(graphs.old, path)
        if how == "statement":
            status = _run(path, graphs.draft, _killer_at(int(point)), None)
        else:
            status = _run(path, graphs.draft, lambda _s, _p: None, float(point))
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert killed or os.WEXITSTATUS(status) == 0, f"attempt {attempt} ({how} {point}) crashed"

        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        open_store(path).close()  # opens (and would migrate) after the crash
        now_counts, now_digest = graph_state(path)
        if (now_counts, now_digest) == (graphs.old_counts, graphs.old_digest):
            outcomes.append("old")
        else:
            assert (now_counts, now_digest) == (graphs.new_counts, graphs.new_digest), (
                f"attempt {attempt} ({how} {point}, killed={killed}) left a mixed graph"
            )
            outcomes.append("new")
        path.unlink()
    assert "old" in outcomes and "new" in outcomes, outcomes
    assert outcomes.count("old") >= SELF_KILLS - 2, "kills inside the transaction roll back"
