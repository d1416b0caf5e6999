"""Who a process is, so another process can tell later whether it is still running.

A process id alone is not enough: ids are reused, and after a reboot a new process may
hold an old id. On Linux a process is also identified by the boot it runs in
(``/proc/sys/kernel/random/boot_id``) and its start time in clock ticks since that boot
(field 22 of ``/proc/<pid>/stat``); elsewhere only the host name and the id are known.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """A process as other processes can find it again."""

    host: str
    pid: int
    start: str | None
    """``<boot id>:<start ticks>`` where the system tells (Linux), else None."""


def _boot_id() -> str | None:
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None


def _stat(pid: int) -> list[str] | None:
    """Fields 3 … of ``/proc/<pid>/stat`` (state first), or None where there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields if len(fields) > 19 else None


def _start(pid: int) -> str | None:
    boot, fields = _boot_id(), _stat(pid)
    return f"{boot}:{fields[19]}" if boot is not None and fields is not None else None


def this_process() -> ProcessIdentity:
    """The calling process."""
    pid = os.getpid()
    return ProcessIdentity(socket.gethostname(), pid, _start(pid))


def still_running(process: ProcessIdentity) -> bool | None:
    """Whether ``process`` still runs: None when it ran on another host (no way to tell here).

    A process of this host is gone when its id is free, when it has exited and waits only
    to be reaped (a zombie), when this host has booted since (another boot id) or when the
    id now belongs to a process that started at another time.
    """
    if process.host != socket.gethostname():
        return None
    if process.start is not None:
        boot, _, _ticks = process.start.partition(":")
        current_boot = _boot_id()
        if current_boot is not None and current_boot != boot:
            return False
    try:
        os.kill(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    fields = _stat(process.pid)
    if fields is not None and fields[0] in ("Z", "X"):
        return False
    if process.start is not None:
        now = _start(process.pid)
        if now is not None and now != process.start:
            return False
    return True
