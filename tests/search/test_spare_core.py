"""Whether a search's helper threads get a core of their own (``_spare.py``): the CPU the
machine's other processes used since the last reading, this process's own left out, so a
server busy with its own searches on an idle machine keeps its helpers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from proctor.search import _spare


class Machine:
    """A fake clock, machine and process: seconds of busy CPU of each since boot."""

    def __init__(self) -> None:
        self.now = 100.0
        self.busy = 1_000.0
        self.own = 10.0

    def run(self, seconds: float, *, ours: float, others: float) -> None:
        """``seconds`` pass, this process and the others using that many cores."""
        self.now += seconds
        self.own += ours * seconds
        self.busy += (ours + others) * seconds


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    fake = Machine()
    monkeypatch.setattr(_spare, "cores", lambda: 2)
    monkeypatch.setattr(_spare.time, "monotonic", lambda: fake.now)
    monkeypatch.setattr(_spare.time, "process_time", lambda: fake.own)
    monkeypatch.setattr(_spare, "machine_busy", lambda: fake.busy)
    monkeypatch.setattr(_spare.os, "getloadavg", lambda: (1.2, 1.0, 1.0))
    _spare.forget()
    yield fake
    _spare.forget()


def test_our_own_work_leaves_a_core_spare(machine: Machine) -> None:
    assert _spare.spare_core()  # first reading: the load average (1.2 < 1.5)
    for _ in range(10):  # a server searching one query after another, nothing else
        machine.run(0.6, ours=1.3, others=0.05)
        assert _spare.spare_core()


def test_other_work_takes_the_spare_core(machine: Machine) -> None:
    _spare.spare_core()
    machine.run(1.0, ours=0.2, others=0.6)  # more than half a core
    assert not _spare.spare_core()
    machine.run(1.0, ours=1.0, others=0.3)
    assert _spare.spare_core()


def test_a_reading_stands_for_half_a_second(machine: Machine) -> None:
    _spare.spare_core()
    machine.run(1.0, ours=0.0, others=1.9)
    assert not _spare.spare_core()
    machine.run(0.4, ours=0.0, others=0.0)
    assert not _spare.spare_core()  # not read again yet
    machine.run(0.2, ours=0.0, others=0.0)
    assert _spare.spare_core()  # the 0.6 s since the last reading: idle


def test_one_core_never_has_a_spare_one(machine: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_spare, "cores", lambda: 1)
    assert not _spare.spare_core()


def test_without_proc_stat_the_load_average_decides(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spare, "machine_busy", lambda: None)
    assert _spare.spare_core()
    machine.run(1.0, ours=0.0, others=0.0)
    monkeypatch.setattr(_spare.os, "getloadavg", lambda: (1.7, 1.0, 1.0))
    assert not _spare.spare_core()


def test_the_machine_is_read() -> None:
    busy = _spare.machine_busy()
    assert busy is None or busy > 0
    assert _spare.cores() >= 1
