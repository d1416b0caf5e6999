"""Whether a core is likely idle for a search's helper threads: the CPU time the machine's
other processes used lately, this process's own left out.

A search's helper threads (the vector part, half of the full-text ranking: ``_query.py``)
only shorten it where they get a core of their own; on a busy machine they add their CPU
and wait for their turn. The one-minute load average, used before, counts this process's
own work: a server answering searches one after another is itself a load of about one, so
on an idle two-core machine the average crossed its threshold (1.5) while searches ran and
the helpers went on and off within a run. What counts here is what the others used: the
machine's busy CPU time (``/proc/stat``) less this process's (``time.process_time``),
over the time since the last reading (read again at most every ``READ_EVERY`` seconds).
The first reading, and every one where ``/proc/stat`` cannot be read, falls back on the
load average (below the cores less one half).
"""

from __future__ import annotations

import os
import threading
import time

READ_EVERY = 0.5
"""Seconds a reading stands for: a busy server asks on every search."""
SPARE = 1.5
"""A helper runs where the other processes used less than the cores less this many
(two cores: less than half of one), averaged since the last reading."""

_lock = threading.Lock()
_last: tuple[float, float, float] | None = None
"""When it was read, the machine's busy seconds then, this process's CPU seconds then."""
_verdict = False


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_busy() -> float | None:
    """Seconds of CPU the whole machine has spent busy since boot (every core: user, nice,
    system, interrupts, and time the hypervisor took: steal), None where not known."""
    try:
        with open("/proc/stat", "rb") as stat:
            line = stat.readline().split()
    except OSError:
        return None
    if not line or line[0] != b"cpu" or len(line) < 9:
        return None
    ticks = [int(value) for value in line[1:9]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def _by_load(count: int) -> bool:
    try:
        load = os.getloadavg()[0]
    except OSError:  # not known here: as on an idle machine
        return True
    return load < count - 0.5


def spare_core() -> bool:
    """Whether another core is likely idle: at least two cores, and the other processes
    used less than ``cores() - SPARE`` of them since the last reading (the first reading:
    the one-minute load average below the cores less one half)."""
    global _last, _verdict
    count = cores()
    if count < 2:
        return False
    now = time.monotonic()
    with _lock:
        if _last is not None and now - _last[0] < READ_EVERY:
            return _verdict
        busy, own = machine_busy(), time.process_time()
        if busy is None or _last is None:
            _verdict = _by_load(count)
        else:
            others = (busy - _last[1]) - (own - _last[2])
            _verdict = others < (count - SPARE) * (now - _last[0])
        _last = (now, busy if busy is not None else 0.0, own)
        return _verdict


def forget() -> None:
    """Drop the last reading (tests)."""
    global _last, _verdict
    with _lock:
        _last, _verdict = None, False
