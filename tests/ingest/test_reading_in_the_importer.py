"""``Readers``: worker processes fed through pipes of their own, and the importing process
reading what no worker has been handed while it waits. Each unit is read exactly once,
by one process, and results come in the order units were added. Real worker processes:
a read here returns the process that read it."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from proctor.ingest import _readers
from proctor.ingest._readers import ReaderDied, Readers


def _read(task: tuple[str, float]) -> tuple[str, int]:
    """A unit: its name and how long its reading takes."""
    name, seconds = task
    if seconds:
        time.sleep(seconds)  # a long unit, as a worker sees it
    if name == "fails":
        raise ValueError("this unit cannot be read")
    return name, os.getpid()


def _take_all(readers: Readers[tuple[str, float], tuple[str, int]]) -> list[tuple[str, int]]:
    taken: list[tuple[str, int]] = []
    while readers:
        taken.append(readers.next())
    return taken


def test_every_unit_is_read_once_and_taken_in_order() -> None:
    names = [f"unit-{n}" for n in range(40)]
    with Readers(2, _read, ahead=3) as readers:
        taken: list[tuple[str, int]] = []
        for name in names:
            readers.add((name, 0.0))
            if len(readers) >= 8:
                taken.append(readers.next())
        taken += _take_all(readers)
    assert [name for name, _ in taken] == names
    readers_seen = {pid for _, pid in taken}
    assert len(readers_seen - {os.getpid()}) >= 1  # the workers read some


def test_the_importer_reads_what_no_worker_has_while_it_waits() -> None:
    # One worker, handed one unit ahead: it sleeps on the first, so the importer reads
    # every later unit itself rather than wait (and takes them in order afterwards).
    with Readers(1, _read, ahead=1) as readers:
        readers.add(("slow", 1.0))
        for n in range(4):
            readers.add((f"quick-{n}", 0.0))
        taken = _take_all(readers)
    assert [name for name, _ in taken] == ["slow", "quick-0", "quick-1", "quick-2", "quick-3"]
    assert taken[0][1] != os.getpid()  # the worker's
    assert {pid for _, pid in taken[1:]} == {os.getpid()}


def test_a_worker_is_handed_units_up_to_its_weight_ahead() -> None:
    # Ahead 3: the worker takes the units of weights 1 and 2, not the third; the importer
    # reads that one.
    with Readers(1, _read, ahead=3) as readers:
        readers.add(("first", 1.0), 1)
        readers.add(("second", 0.0), 2)
        readers.add(("third", 0.0), 1)
        taken = _take_all(readers)
    worker = taken[0][1]
    assert worker != os.getpid()
    assert [pid for _, pid in taken] == [worker, worker, os.getpid()]


def test_a_unit_a_worker_cannot_read_stops_the_import_with_its_reason() -> None:
    with Readers(1, _read, ahead=1) as readers:
        readers.add(("fails", 0.0))
        with pytest.raises(RuntimeError, match="ValueError: this unit cannot be read"):
            readers.next()


def test_a_worker_that_dies_is_named() -> None:
    with Readers(1, _read, ahead=1) as readers:
        readers.add(("long", 30.0))
        worker = readers._readers[0].process
        os.kill(worker.pid, signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(ReaderDied, match=r"exit code -9.*run it again"):
            readers.next()
    assert time.monotonic() - started < 10  # not the 30 s read


def _fail_while_reading(processes: list[Any]) -> None:
    with Readers(2, _read, ahead=1) as readers:
        readers.add(("long", 30.0))
        readers.add(("long", 30.0))
        processes += [reader.process for reader in readers._readers]
        raise KeyError("the writer failed")


def test_leaving_by_an_exception_ends_the_workers_at_once() -> None:
    started = time.monotonic()
    processes: list[Any] = []
    with pytest.raises(KeyError):
        _fail_while_reading(processes)
    assert len(processes) == 2
    assert time.monotonic() - started < 10
    assert not any(process.is_alive() for process in processes)


def test_a_finished_import_lets_its_workers_exit() -> None:
    with Readers(2, _read, ahead=1) as readers:
        readers.add(("unit", 0.0))
        processes = [reader.process for reader in readers._readers]
        assert _take_all(readers) == [("unit", processes[0].pid)]
    assert [process.exitcode for process in processes] == [0, 0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_GETPIPE_SZ is Linux's")
def test_a_workers_result_pipe_holds_several_results() -> None:
    import fcntl

    limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    with Readers(1, _read, ahead=1) as readers:
        room = fcntl.fcntl(readers._readers[0].results.fileno(), fcntl.F_GETPIPE_SZ)
    assert room == min(_readers.RESULT_PIPE_BYTES, limit) > 64 * 1024


def _large(task: tuple[str, str]) -> tuple[str, bytes]:
    """A unit whose result is larger than a widened result pipe."""
    return task[0], b"x" * 3_000_000


def test_large_units_with_larger_results_never_stall_the_pipes() -> None:
    # Units of 20 KB pickled (a session with hundreds of sub-agent files) and of no
    # weight (handed ahead without limit but the pipe's room): a worker waiting to send
    # a 3 MB result, and an importer waiting to write into its full unit pipe, would
    # each wait for the other.
    taken: list[str] = []
    processes: list[Any] = []

    def run() -> None:
        with Readers(1, _large, ahead=1) as readers:
            processes.extend(reader.process for reader in readers._readers)
            for n in range(40):
                readers.add((f"unit-{n}", "p" * 20_000), 0)
            while readers:
                taken.append(readers.next()[0])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    stalled = thread.is_alive()
    if stalled:  # end the worker, so the stalled thread does not outlive the test
        for process in processes:
            process.kill()
    assert not stalled
    assert taken == [f"unit-{n}" for n in range(40)]
