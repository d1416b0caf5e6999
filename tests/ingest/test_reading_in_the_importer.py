"""While the first unit in flight is not ready, the importing process reads a unit no
worker has started instead of waiting: each unit is read exactly once, by one process,
and results still come in submission order."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from proctor.ingest import _reading
from proctor.sources import ReadUnit, default_adapters

Result = tuple[_reading.UnitTask, list[Any]]


def _tasks(count: int) -> list[_reading.UnitTask]:
    adapter = default_adapters()[0]
    return [_reading.UnitTask(adapter, ReadUnit(Path(f"/nowhere/{n}.jsonl"))) for n in range(count)]


def _take_all(window: deque[_reading._InFlight]) -> list[list[Any]]:
    """Every unit's items, taken as the importer takes them."""
    taken: list[list[Any]] = []
    while window:
        taken.append(list(_reading._next_result(window, None)[1]))
    return taken


def _finish_by_workers(tasks: list[_reading.UnitTask], futures: list[Future[Result]]) -> None:
    for task, future in zip(tasks, futures, strict=True):
        if future.set_running_or_notify_cancel():
            future.set_result((task, [f"worker:{task.unit.path.name}"]))


@pytest.fixture
def read_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The units this process reads (``_read_all`` stubbed: no files are opened)."""
    read: list[str] = []

    def fake(task: _reading.UnitTask, limits: object) -> Result:
        read.append(task.unit.path.name)
        return task, [f"here:{task.unit.path.name}"]

    monkeypatch.setattr(_reading, "_read_all", fake)
    return read


def test_units_no_worker_started_are_read_here_in_order(read_here: list[str]) -> None:
    tasks = _tasks(4)
    futures: list[Future[Result]] = [Future() for _ in tasks]
    window = deque(_reading._InFlight(t, f) for t, f in zip(tasks, futures, strict=True))
    # An importer that waited for the workers would get their results, after a while.
    late = threading.Timer(2.0, _finish_by_workers, (tasks, futures))
    late.start()
    try:
        results = _take_all(window)
    finally:
        late.cancel()
        late.join()
    assert results == [[f"here:{n}.jsonl"] for n in range(4)]
    assert read_here == [f"{n}.jsonl" for n in range(4)]
    assert all(f.cancelled() for f in futures)  # no worker will read them too


def test_a_started_unit_is_waited_for_and_later_ones_are_read_meanwhile(
    read_here: list[str],
) -> None:
    tasks = _tasks(3)
    futures: list[Future[Result]] = [Future() for _ in tasks]
    assert futures[0].set_running_or_notify_cancel()  # a worker has the first unit
    window = deque(_reading._InFlight(t, f) for t, f in zip(tasks, futures, strict=True))
    # The worker finishes once both later units have been read here.
    done = threading.Timer(0.05, lambda: futures[0].set_result((tasks[0], ["worker:0.jsonl"])))
    done.start()
    try:
        results = _take_all(window)
    finally:
        done.join()
    assert results == [
        ["worker:0.jsonl"],
        ["here:1.jsonl"],
        ["here:2.jsonl"],
    ]
    assert read_here == ["1.jsonl", "2.jsonl"]  # never the worker's unit


def test_when_every_unit_is_started_the_first_is_waited_for(read_here: list[str]) -> None:
    tasks = _tasks(2)
    futures: list[Future[Result]] = [Future() for _ in tasks]
    for future in futures:
        assert future.set_running_or_notify_cancel()
    window = deque(_reading._InFlight(t, f) for t, f in zip(tasks, futures, strict=True))
    for task, future in zip(tasks, futures, strict=True):
        future.set_result((task, [f"worker:{task.unit.path.name}"]))
    assert _take_all(window) == [["worker:0.jsonl"], ["worker:1.jsonl"]]
    assert read_here == []
