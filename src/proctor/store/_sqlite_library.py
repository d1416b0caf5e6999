"""SQLite's process-wide settings, made before the process's first connection.

SQLite counts the memory it allocates (``sqlite3_status``) unless it was built with
``SQLITE_DEFAULT_MEMSTATUS=0``, which SQLite's "Recommended Compile-time Options" advise:
with the count on, every allocation takes one process-wide mutex. Debian's library keeps
it on, so two threads ranking full text at once (``proctor.search._query._halves``) take
turns at that mutex: "git commit" on the 1 GB bench store, each half on its own connection
and thread, cost 47 ms of CPU per half side by side against 23 ms alone, and 29 and 23 ms
with the count off (bench/results/serve.md).

Python's ``sqlite3`` (3.11) has no call for ``sqlite3_config`` and initialises the library
when imported, so ``stop_counting_allocations`` calls SQLite's C interface itself
(``ctypes``): shut the library down, turn the count off, initialise it again. That is
allowed only while the process holds no SQLite object (no connection, no statement):
SQLite's own count says so, and is read first. A long-running server calls this as it
starts, before it opens its store or starts a thread.
"""

from __future__ import annotations

import ctypes
import sys
import threading

SQLITE_OK = 0
SQLITE_CONFIG_MEMSTATUS = 9
"""``sqlite3.h``: turn the allocation count on (1) or off (0)."""

_lock = threading.Lock()
_turned_off = False


def stop_counting_allocations() -> bool:
    """Turn SQLite's count of allocated memory off for this process, where it can be done
    safely: True when the count is off now (this call or an earlier one turned it off, or
    the library never kept it), False when it stays on: the library's interface cannot be
    reached (a build that does not export it) or SQLite objects are open already."""
    global _turned_off
    with _lock:
        if _turned_off:
            return True
        library = _library()
        if library is None:
            return False
        if library.sqlite3_memory_used() != 0:
            return False  # something is allocated: a connection or statement is open
        counted = _counted_with_probe(library)
        if counted is None:
            return False
        if counted == 0:  # the library keeps no count: nothing to turn off
            _turned_off = True
            return True
        # Nothing but the probe was ever counted: no SQLite object exists in the process.
        if library.sqlite3_shutdown() != SQLITE_OK:
            library.sqlite3_initialize()
            return False
        configured = library.sqlite3_config(SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0))
        if library.sqlite3_initialize() != SQLITE_OK:
            raise RuntimeError("SQLite could not be initialised again")  # pragma: no cover
        _turned_off = bool(configured == SQLITE_OK)
        return _turned_off


def counts_allocations() -> bool:
    """Whether SQLite counts the memory it allocates in this process (a probe allocation
    moves its count); False also where the interface cannot be reached."""
    library = _library()
    if library is None:
        return False
    before = library.sqlite3_memory_used()
    during = _counted_with_probe(library)
    return during is not None and during > before


def _counted_with_probe(library: ctypes.CDLL) -> int | None:
    """SQLite's count of allocated memory while a probe of 64 bytes is allocated (None
    when the probe cannot be)."""
    probe = library.sqlite3_malloc(64)
    if not probe:
        return None
    counted = int(library.sqlite3_memory_used())
    library.sqlite3_free(probe)
    return counted


def _library() -> ctypes.CDLL | None:
    """The SQLite library Python's ``sqlite3`` module uses (its symbols, looked up through
    the extension module), with the signatures used here; None where it cannot be reached,
    and off Linux: ``sqlite3_config`` takes variable arguments, which ``ctypes`` passes as
    fixed ones, the same only where the platform's convention makes them so (Linux on
    x86-64 and Arm; not macOS on Arm)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import _sqlite3

        library = ctypes.CDLL(_sqlite3.__file__)
        library.sqlite3_memory_used.restype = ctypes.c_int64
        library.sqlite3_memory_used.argtypes = []
        library.sqlite3_malloc.restype = ctypes.c_void_p
        library.sqlite3_malloc.argtypes = [ctypes.c_int]
        library.sqlite3_free.restype = None
        library.sqlite3_free.argtypes = [ctypes.c_void_p]
        library.sqlite3_shutdown.restype = ctypes.c_int
        library.sqlite3_initialize.restype = ctypes.c_int
        library.sqlite3_config.restype = ctypes.c_int
    except (ImportError, OSError, AttributeError):
        return None
    return library
