"""Reading and preparing read units, in this process or in worker processes.

Parsing, redaction and fingerprinting are pure CPU work; writing is one SQLite writer.
For large imports the work is split: worker processes read and prepare units while this
process writes and reads the units no worker has been handed (``_readers.Readers``), with
a bounded number of units and bytes in flight so memory stays flat. Results
come back in submission order, so an import writes the same things in the same order
whether or not workers were used.

Workers end with the process that started them, however it ends: killed with SIGKILL,
the importing process cannot end its workers, and a worker blocked on its task pipe
would wait forever (a later forked worker holds a copy of its writing end until it
closes it). On Linux the kernel sends each
worker SIGKILL when its parent dies (``PR_SET_PDEATHSIG``); everywhere a thread in each
worker watches its parent and ends the worker within ``PARENT_WATCH_SECONDS`` of it.
"""

from __future__ import annotations

import copyreg
import ctypes
import ctypes.util
import dataclasses
import gc
import hashlib
import multiprocessing
import operator
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from proctor.ingest._readers import Readers
from proctor.sources import (
    Limits,
    ReadUnit,
    SourceAdapter,
    prepare_imported_bundle,
    read_unit,
    unreadable_unit,
)
from proctor.store import ConversationRows, conversation_rows
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    PreparedBundle,
    PreparedSource,
    SourceIssue,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
)

PreparedItem = PreparedBundle | SourceIssue
RowsItem = ConversationRows | SourceIssue
"""What a unit's reader hands the writer: each conversation as its rows, or an issue."""

_WINDOW_PER_JOB = 64
"""Units in flight per reading process, at most: enough that the importer has units left
to read itself while each worker has ``READ_AHEAD_BYTES`` in hand."""
_WINDOW_BYTES_PER_JOB = 16 * 1024 * 1024
"""Input in flight per reading process, at most: what the importer holds read and not yet
written stays bounded however large the units."""

PARALLEL_MIN_BYTES = 32 * 1024 * 1024
"""Below this much input, starting worker processes costs more than it saves."""

IMPORT_GC_THRESHOLD = (50_000, 20, 100)
"""Garbage collector thresholds while importing. Parsing allocates millions of short-lived
dicts and lists, none in cycles; at Python's default (700 allocations) the collector runs
thousands of times over them and takes a fifth of the reading time."""


def _pickle_by_fields(cls: type[Any]) -> None:
    """Pickle ``cls`` (a frozen dataclass with slots) as its class and field values.

    A worker's bundles travel to the writing process by pickle. Python's own pickling
    of a dataclass with slots looks its fields up for every object, both ways, which
    costs as much as the writer's own work on the rows; this reduces each object to
    ``(cls, values)`` in C (``attrgetter``) and rebuilds it through its ``__init__``."""
    values = operator.attrgetter(*(one.name for one in dataclasses.fields(cls)))

    def reduce(obj: Any) -> tuple[type[Any], tuple[Any, ...]]:
        return cls, values(obj)

    copyreg.pickle(cls, reduce)


for _travelling in (
    ConversationRows,
    PreparedBundle,
    PreparedSource,
    ConversationBundle,
    Conversation,
    Message,
    Usage,
    ToolCall,
    Task,
    TaskEvent,
    SubagentRun,
    SourceIssue,
):
    _pickle_by_fields(_travelling)

PARENT_WATCH_SECONDS = 0.5
"""How often a worker checks that the process that started it is still there."""

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class UnitTask:
    """One read unit that has to be read (its bytes changed since the last import)."""

    adapter: SourceAdapter
    unit: ReadUnit
    digest: tuple[str, int] | None = None
    """Content hash and size of the unit's files; None until its reader takes them."""
    key: str | None = None
    """The unit's name in the store's record of imported files (its resolved path)."""

    @property
    def size(self) -> int:
        """Bytes of the unit's files (0 before they are read)."""
        return 0 if self.digest is None else self.digest[1]


_DIGEST_BUFFERS = threading.local()
"""Each thread's buffer for ``unit_digest``, made once: a new megabyte per unit is a
megabyte zeroed per file (2,282 of them in the 1 GB bench corpus)."""

DIGEST_MARK = "S"
"""The first character of a unit digest (``unit_digest``): SHA-256, which this machine's
OpenSSL hashes about twice as fast as CPython's own BLAKE2b. Digests recorded by earlier
imports are 32 hexadecimal digits of BLAKE2b (``legacy_unit_digest``), never this."""


def unit_digest(unit: ReadUnit) -> tuple[str, int]:
    """Content hash and total size of every file of a read unit: ``DIGEST_MARK`` and the
    first 31 hexadecimal digits of the SHA-256 of their names and bytes (the store keeps
    32 characters)."""
    digest, size = _hash_unit(unit, hashlib.sha256())
    return DIGEST_MARK + digest[:31], size


def legacy_unit_digest(unit: ReadUnit) -> tuple[str, int]:
    """``unit_digest`` as imports before ``DIGEST_MARK`` took it (BLAKE2b, 16 bytes): to
    tell a unit recorded then unchanged without reading it again."""
    return _hash_unit(unit, hashlib.blake2b(digest_size=16))


def _hash_unit(unit: ReadUnit, digest: Any) -> tuple[str, int]:
    """The hex digest of ``digest`` fed every file's name and bytes, and their size."""
    size = 0
    # Read into one buffer: no new megabyte object per read.
    buffer: bytearray | None = getattr(_DIGEST_BUFFERS, "buffer", None)
    if buffer is None:
        buffer = _DIGEST_BUFFERS.buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    for path in sorted(unit.paths):
        digest.update(os.fsencode(path.name) + b"\0")
        with path.open("rb", buffering=0) as handle:
            while count := handle.readinto(buffer):
                digest.update(view[:count])
                size += count
    return str(digest.hexdigest()), size


def _with_digest(task: UnitTask) -> UnitTask:
    """``task`` with its unit's digest, taken here when the planner did not need it."""
    return task if task.digest is not None else replace(task, digest=unit_digest(task.unit))


def read_prepared(
    adapter: SourceAdapter, unit: ReadUnit, limits: Limits | None
) -> Iterator[PreparedItem]:
    """Read one unit and prepare every bundle in it; issues pass through, and a bundle that
    cannot be prepared (redacted, bounded, fingerprinted) becomes an issue naming it while
    the rest of the unit is still read."""
    for item in read_unit(adapter, unit):
        if isinstance(item, SourceIssue):
            yield item
            continue
        try:
            prepared = prepare_imported_bundle(item, limits)
        except Exception as exc:  # RecursionError included: one record, not the unit
            yield SourceIssue(
                str(unit.path),
                f"conversation {item.conversation_id}: cannot be prepared "
                f"({type(exc).__name__}: {exc}); skipped",
            )
            continue
        yield prepared


def read_rows(adapter: SourceAdapter, unit: ReadUnit, limits: Limits | None) -> Iterator[RowsItem]:
    """``read_prepared``, each bundle as the rows the store writes (``conversation_rows``):
    tuples of plain values, which travel from a worker process without a Python call per
    message or tool call."""
    for item in read_prepared(adapter, unit, limits):
        yield item if isinstance(item, SourceIssue) else conversation_rows(item)


def _read_all(task: UnitTask, limits: Limits | None) -> tuple[UnitTask, list[RowsItem]]:
    """The task with its digest and everything its unit yields, in a worker process; a
    failure the adapter did not foresee ends only this unit (what it yielded before is
    kept), never the import."""
    task = _with_digest(task)
    items: list[RowsItem] = []
    try:
        items.extend(read_rows(task.adapter, task.unit, limits))
    except Exception as exc:  # RecursionError included
        items.append(unreadable_unit(task.adapter, task.unit, exc))
    return task, items


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with ``IMPORT_GC_THRESHOLD``; the caller's thresholds come back after."""
    before = gc.get_threshold()
    gc.set_threshold(*IMPORT_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def start_worker(parent: int) -> None:
    """Worker initializer: end with ``parent`` (``end_with_parent``), collect garbage at
    ``IMPORT_GC_THRESHOLD``."""
    gc.set_threshold(*IMPORT_GC_THRESHOLD)
    end_with_parent(parent)


def end_with_parent(parent: int) -> None:
    """Worker initializer: end this process when process ``parent`` ends (module docstring)."""
    _arm_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(
        target=_watch_parent, args=(parent,), name="proctor-parent-watch", daemon=True
    ).start()


def _arm_parent_death_signal() -> None:
    """Linux: have the kernel send this process SIGKILL when its parent dies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watch thread still ends the worker


def _watch_parent(parent: int) -> None:
    """Exit at once (no cleanup: the pipes may be dead) once ``parent`` is gone."""
    while os.getppid() == parent:
        time.sleep(PARENT_WATCH_SECONDS)
    os._exit(1)


IMPORTER_IS_A_READER = True
"""Whether ``jobs`` counts the importing process as one of the processes that read: then
``jobs - 1`` workers are started and the importer reads every unit none of them has
been handed while it waits for the next result (``Readers.next``), so ``jobs`` processes
share the CPUs instead of ``jobs + 1`` (fewer units pickled and sent, one process less).
Measured quietly on the 200 MB bench corpus, two rounds of five alternated pairs
(``bench/ingest.py --compare-workers``, bench/results/ingest.md): 0.90x and 0.87x the
peer's parse rate with it, 0.85x and 0.79x with ``jobs`` workers, nine pairs of ten.
False: ``jobs`` workers, the importer reading only what they have not been handed when it
would wait."""


def reading_workers(jobs: int) -> int:
    """Worker processes to start for ``jobs`` (0: read in this process alone)."""
    if jobs <= 1:
        return 0
    return jobs - 1 if IMPORTER_IS_A_READER else jobs


def auto_jobs(total_bytes: int) -> int:
    """Processes worth reading ``total_bytes`` of input with (1 = this one alone;
    ``reading_workers`` says how many workers that starts)."""
    if total_bytes < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, 4))


READ_AHEAD_BYTES = 4 * 1024 * 1024
"""Input a worker is handed ahead of the results the importer has taken (``Readers``):
about a tenth of a second of reading, longer than the importer spends between two
hand-outs (reading a unit itself, up to a few megabytes, or committing a batch), so the
worker does not wait for work. The bench corpus's largest unit is 2.8 MB."""


def unit_bytes(unit: ReadUnit) -> int:
    """The bytes of ``unit``'s files as they are now (0 for a file gone: its reader
    reports it)."""
    size = 0
    for path in unit.paths:
        with suppress(OSError):
            size += path.stat().st_size
    return size


def prepared_units(
    tasks: Iterable[UnitTask], limits: Limits | None, jobs: int
) -> Iterator[tuple[UnitTask, Iterable[RowsItem]]]:
    """Each task with its prepared items, in order; ``jobs > 1`` reads in worker processes
    as well (``reading_workers``)."""
    workers = reading_workers(jobs)
    if workers == 0:
        for task in tasks:
            task = _with_digest(task)
            yield task, read_rows(task.adapter, task.unit, limits)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    read = partial(_read_all, limits=limits)
    window_bytes = _WINDOW_BYTES_PER_JOB * jobs
    with Readers(
        workers,
        read,
        ahead=READ_AHEAD_BYTES,
        initializer=start_worker,
        initargs=(os.getpid(),),
        method=method,
    ) as readers:
        for task in tasks:
            readers.add(task, unit_bytes(task.unit))
            if len(readers) >= _WINDOW_PER_JOB * jobs or readers.weight >= window_bytes:
                yield readers.next()
        while readers:
            yield readers.next()
