"""Saving one review batch: a fixed set of statements, whatever the batch's size (REV-5).

The statements are built once, with bound parameters, so saving a batch sends the same
statements every time (eight at most): usage and state of the run and the batch, the
batch's entries (one range of the (run_id, batch_no, position) index: where each source
sits), one ``executemany`` per kind of manifest change (read, omitted) by primary key,
and the run's counts moved by this batch's difference. Counting the run's whole manifest
after every batch made a review quadratic; one UPDATE per source made it slow, and
finding each source by walking its batch's range made every save quadratic in the
batch's size. How the entries move is ``proctor.graph.entry_changes``'s decision; this
module executes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, select, update
from sqlalchemy.engine import Connection

from proctor.graph import entry_changes
from proctor.store import _schema as t

_runs, _batches, _slot, _m = (
    t.review_runs.c,
    t.review_batches.c,
    t.review_slot.c,
    t.review_manifest.c,
)

_ADD_USAGE = (
    update(t.review_runs)
    .where(_runs.run_id == bindparam("b_run"))
    .values(
        model_calls=_runs.model_calls + bindparam("b_calls"),
        input_tokens=_runs.input_tokens + bindparam("b_input"),
        output_tokens=_runs.output_tokens + bindparam("b_output"),
        updated_at=bindparam("b_now"),
    )
    .returning(_runs.status)
)
"""Usage is counted whatever the run's state (it was spent); the state comes back."""
_BEAT = (
    update(t.review_slot)
    .where(_slot.run_id == bindparam("b_run"))
    .values(heartbeat_at=bindparam("b_now"))
)
_SAVE_BATCH = (
    update(t.review_batches)
    .where(_batches.run_id == bindparam("b_run"), _batches.batch_no == bindparam("b_batch"))
    .values(
        state=bindparam("b_state"),
        output=bindparam("b_output_json", type_=t.review_batches.c.output.type),
        error=bindparam("b_error"),
        model_calls=_batches.model_calls + bindparam("b_calls"),
        input_tokens=_batches.input_tokens + bindparam("b_input"),
        output_tokens=_batches.output_tokens + bindparam("b_output"),
        completed_at=bindparam("b_now"),
    )
)
_IN_BATCH = and_(_m.run_id == bindparam("b_run"), _m.batch_no == bindparam("b_batch"))
_ENTRY = and_(_m.run_id == bindparam("b_run"), _m.position == bindparam("b_position"))
"""One manifest entry by its primary key: found at once, not by walking the batch's range
for each of its sources (quadratic in the batch's size)."""
_PAGE = select(_m.source_type, _m.source_id, _m.position, _m.state).where(_IN_BATCH)
"""The batch's entries: where each source sits, and how many were read before the save."""
_MARK_READ = (
    update(t.review_manifest)
    .where(_ENTRY)
    .values(state=bindparam("b_state"), fingerprint=bindparam("b_fingerprint"))
)
_MARK_OMITTED = update(t.review_manifest).where(_ENTRY).values(state="omitted")
_READ_AND_DONE = select(
    select(func.count()).where(_IN_BATCH, _m.state != "pending").scalar_subquery(),
    select(func.count())
    .where(_batches.run_id == bindparam("b_run"), _batches.state == "done")
    .scalar_subquery(),
)
"""This batch's entries no longer pending, and the run's batches done, after the save."""
_MOVE_COUNTS = (
    update(t.review_runs)
    .where(_runs.run_id == bindparam("b_run"))
    .values(
        batches_done=bindparam("b_done"),
        sources_done=_runs.sources_done + bindparam("b_delta"),
    )
)


def save_batch(
    conn: Connection,
    run_id: str,
    batch_no: int,
    *,
    state: str,
    output: dict[str, Any] | None,
    error: str | None,
    read: dict[tuple[str, str], str],
    omitted: Sequence[tuple[str, str]],
    usage: tuple[int, int, int],
    now: datetime,
) -> bool:
    """``ReviewStore.save_review_batch`` in the caller's transaction (see there)."""
    run = {"b_run": run_id, "b_now": now}
    calls, input_tokens, output_tokens = usage
    spent = {"b_calls": calls, "b_input": input_tokens, "b_output": output_tokens}
    if conn.execute(_ADD_USAGE, {**run, **spent}).scalar_one() != "running":
        return False
    conn.execute(_BEAT, run)
    batch = {"b_run": run_id, "b_batch": batch_no}
    conn.execute(
        _SAVE_BATCH,
        {**run, **batch, **spent, "b_state": state, "b_output_json": output, "b_error": error},
    )
    position: dict[tuple[str, str], int] = {}
    read_before = 0
    for kind, source_id, at, entry in conn.execute(_PAGE, batch):
        position[(kind, source_id)] = at
        read_before += entry != "pending"
    changes = entry_changes(position, read, omitted, state)
    if changes.read:
        entry = changes.state
        marked = [
            {"b_run": run_id, "b_position": at, "b_fingerprint": fingerprint, "b_state": entry}
            for at, fingerprint in changes.read
        ]
        _plain_executemany(conn, _MARK_READ, marked)
    if changes.omitted:
        gone = [{"b_run": run_id, "b_position": at} for at in changes.omitted]
        _plain_executemany(conn, _MARK_OMITTED, gone)
    read_after, done = conn.execute(_READ_AND_DONE, batch).one()
    conn.execute(
        _MOVE_COUNTS, {**run, "b_done": int(done), "b_delta": int(read_after) - read_before}
    )
    return True


_compiled: dict[tuple[str, int], tuple[str, tuple[str, ...] | None, dict[str, Any]]] = {}


def _plain_executemany(conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
    """``conn.execute(statement, rows)`` handed straight to the driver: the statement is
    compiled once per dialect and the rows become the driver's parameters as they are
    (their values are plain strings and integers, which need no bind processing), without
    SQLAlchemy walking each of a review's tens of thousands of rows through its parameter
    machinery."""
    key = (conn.dialect.name, id(statement))
    found = _compiled.get(key)
    if found is None:
        compiled = statement.compile(dialect=conn.dialect)
        order = tuple(compiled.positiontup) if compiled.positional else None
        found = _compiled[key] = (compiled.string, order, dict(compiled.params))
    sql, order, defaults = found
    if order is None:
        conn.exec_driver_sql(sql, [defaults | row for row in rows])
    else:
        conn.exec_driver_sql(sql, [tuple((defaults | row)[k] for k in order) for row in rows])
