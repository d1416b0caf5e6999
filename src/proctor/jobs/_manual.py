"""Manual analyses asked for over HTTP ("Run now"), run in the background of the server.

The API answers at once with ``queued``; the analysis then runs here as ``proctor
supervise run`` does it (manual: skips the throttle, never the budget, single flight per
target) and its run shows in the session's last run. Each job is named by a key
``mode|target`` (``mode`` empty: the session's own), so asking again while a run of the
target waits coalesces into it (``AnalysisQueue``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import anyio

from proctor.store import SqlStore
from proctor.supervision import (
    ModelExecutor,
    ScheduleOutcome,
    Scheduler,
    SystemClock,
    resolve_target,
)
from proctor.supervisor import Mode


def manual_key(target_id: str, mode: Mode | None) -> str:
    """The job key of a manual analysis of ``target_id`` (a conversation or ``task:<id>``)."""
    return f"{mode or ''}|{target_id}"


def run_manual_analyses(store: SqlStore, keys: Sequence[str]) -> list[ScheduleOutcome]:
    """Run one manual analysis per key, one after the other; their outcomes."""
    outcomes: list[ScheduleOutcome] = []
    clock = SystemClock()
    for key in keys:
        mode_text, _, target_ref = key.partition("|")
        mode: Mode | None = mode_text or None  # type: ignore[assignment]
        target = resolve_target(store, target_ref)
        scheduler = Scheduler(store, clock=clock, executor=ModelExecutor(store, clock=clock))
        request = partial(scheduler.request, target, "manual", mode=mode, manual=True)
        outcomes.append(anyio.run(request))
    return outcomes
