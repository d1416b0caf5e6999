"""Worker processes that read units for the importing process, each fed through a pipe.

The importing process hands units to its workers and takes their results back in the
order the units came, reading units itself while the next result is not ready. Each
worker has two pipes of its own: units in, results out. The importing process writes a
worker's next units into its pipe itself, as much work ahead as it is told (``ahead``, in
the units' weights: their bytes, for an import), so a worker that finishes a unit starts
the next at once, also while the importing process reads a long unit or commits.

Why not ``concurrent.futures.ProcessPoolExecutor``: it passes every unit and result
through two threads of the importing process (its manager thread and its call queue's
feeder thread), and each must win the interpreter lock from the importer's main thread,
which is busy reading and writing all the while: up to a switch interval (5 ms) per
hand-over. Measured on the 200 MB bench corpus with one worker (bench/results/ingest.md),
the worker waited 0.2–0.4 s for its next unit and 0.2 s more for its result to be taken
from a full pipe, about a sixth of its time. Here a worker's result pipe is widened to
``RESULT_PIPE_BYTES`` (Linux), so a worker does not wait for the importer to read a
result either: the importer takes it when it needs it.

The importer never waits to write a unit into a worker's pipe: the units a worker holds
(handed, result not yet taken) fit in its pipe's room, in their pickled bytes, except for
a single unit handed to a worker that holds nothing (which reads it at once). Otherwise a
worker waiting to send a result larger than its pipe's room, and an importer waiting to
write into the worker's full unit pipe, would each wait for the other: a session with
hundreds of sub-agent files is a large unit to pickle, and its result megabytes.

Tasks are never None: None in a worker's pipe tells it to end.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any, Generic, TypeVar

try:
    import fcntl
except ImportError:  # Windows has none: results wait in a pipe of the default size
    fcntl = None  # type: ignore[assignment]

TaskT = TypeVar("TaskT")
ResultT = TypeVar("ResultT")

RESULT_PIPE_BYTES = 1 << 20
"""Size asked for each worker's result pipe (Linux's default limit for an unprivileged
process): about ten results of the bench corpus (44 MB for 448 units)."""
UNIT_PIPE_ROOM = 16 * 1024
"""The room assumed in a worker's unit pipe where the system does not say (Linux's is
64 KB, asked with ``F_GETPIPE_SZ``; macOS starts a pipe at 16 KB)."""
_HEADER_BYTES = 8
"""What ``Connection.send_bytes`` writes before a message, at most below 2 GB (4 bytes)
with room to spare."""
END_WAIT_SECONDS = 10.0
"""How long an import that ended normally waits for its workers to exit before it ends
them."""


class ReaderDied(RuntimeError):
    """A worker process ended before it sent the result of a unit it was given."""


class _Failed:
    """What a worker sends in place of a result it could not make or send."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _Slot(Generic[TaskT, ResultT]):
    """A unit in flight: not handed to anyone yet, handed to a worker, or done."""

    __slots__ = ("done", "pickled", "reader", "result", "size", "task", "weight")

    def __init__(self, task: TaskT, weight: float) -> None:
        self.task = task
        self.weight = weight
        self.pickled: bytes | None = None
        """The task as it is written into a worker's pipe, from when it is about to be
        until it is."""
        self.size = 0
        """The bytes it took in the pipe."""
        self.reader: _Reader | None = None
        self.done = False
        self.result: ResultT | None = None


class _Reader:
    """One worker process, its two pipes and the units it has been handed, in order."""

    __slots__ = ("assigned", "in_hand", "pipe_bytes", "pipe_room", "process", "results", "tasks")

    def __init__(self, process: Any, tasks: Connection, results: Connection) -> None:
        self.process = process
        self.tasks = tasks
        self.results = results
        self.assigned: deque[_Slot[Any, Any]] = deque()
        self.in_hand = 0.0
        """The weight of ``assigned``."""
        self.pipe_bytes = 0
        """The bytes ``assigned`` took in the unit pipe (at most what is still in it)."""
        self.pipe_room = _room(tasks)
        """The bytes the unit pipe holds."""


class Readers(Generic[TaskT, ResultT]):
    """``count`` worker processes reading with ``read``, and the units in flight.

    ``add`` a unit, then take results in the order units were added with ``next``; a
    unit no worker has been handed is read in this process (also with ``read``) when it
    comes first, or while this process waits for a worker's result. Each unit is read
    exactly once. A worker is handed units until the weight of those whose results have
    not been taken reaches ``ahead`` (at least one). Use as a context manager: leaving it
    ends the workers (at once when it is left by an exception)."""

    def __init__(
        self,
        count: int,
        read: Callable[[TaskT], ResultT],
        *,
        ahead: float,
        initializer: Callable[..., None] | None = None,
        initargs: Sequence[Any] = (),
        method: str = "fork",
    ) -> None:
        self._read = read
        self._ahead = ahead
        self.weight = 0.0
        """The weight of the units in flight."""
        self._window: deque[_Slot[TaskT, ResultT]] = deque()
        self._waiting: deque[_Slot[TaskT, ResultT]] = deque()
        self._readers: list[_Reader] = []
        context = multiprocessing.get_context(method)
        try:
            for _ in range(count):
                self._readers.append(self._start(context, method, initializer, initargs))
        except BaseException:
            self.close(finished=False)
            raise

    def _start(
        self,
        context: Any,
        method: str,
        initializer: Callable[..., None] | None,
        initargs: Sequence[Any],
    ) -> _Reader:
        # Each pipe is (receiving end, sending end).
        worker_tasks, tasks = context.Pipe(duplex=False)
        results, worker_results = context.Pipe(duplex=False)
        _widen(worker_results)
        # A forked worker holds copies of this process's ends of the earlier workers'
        # pipes: it closes them, so an earlier worker's pipes end when this process ends.
        inherited = (
            [end for reader in self._readers for end in (reader.tasks, reader.results)]
            if method == "fork"
            else []
        )
        process = context.Process(
            target=_serve,
            args=(
                worker_tasks,
                worker_results,
                self._read,
                initializer,
                tuple(initargs),
                inherited,
            ),
            name="proctor-reader",
            daemon=True,
        )
        try:
            process.start()
        except BaseException:
            tasks.close()
            results.close()
            raise
        finally:  # the worker's ends are the worker's
            worker_tasks.close()
            worker_results.close()
        return _Reader(process, tasks, results)

    def __enter__(self) -> Readers[TaskT, ResultT]:
        return self

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.close(finished=kind is None)

    def __len__(self) -> int:
        return len(self._window)

    def add(self, task: TaskT, weight: float = 1.0) -> None:
        """Put ``task`` in flight, after those added before it (``weight``: how much work
        it is, in the unit of ``ahead``)."""
        slot: _Slot[TaskT, ResultT] = _Slot(task, weight)
        self.weight += weight
        self._window.append(slot)
        self._waiting.append(slot)
        self._hand_out()

    def next(self) -> ResultT:
        """The result of the first unit in flight, which then leaves the window."""
        first = self._window[0]
        while not first.done:
            reader = first.reader
            if reader is None:  # nobody has it: it is the first waiting one
                self._waiting.popleft()
                self._read_here(first)
                break
            self._hand_out()
            if _done(first):  # its result came in meanwhile
                break
            if self._waiting:  # read a later unit here rather than wait
                self._read_here(self._waiting.popleft())
                continue
            self._receive(reader)
        self._window.popleft()
        self.weight -= first.weight
        self._hand_out()
        return first.result  # type: ignore[return-value]  # set with done

    def _read_here(self, slot: _Slot[TaskT, ResultT]) -> None:
        slot.result = self._read(slot.task)
        slot.done = True

    def _hand_out(self) -> None:
        """Take the results workers have sent, then give the waiting units, first first,
        to the workers with fewest in hand (a unit is in hand until its result is taken)."""
        self._collect()
        waiting = self._waiting
        readers = self._readers
        while waiting and readers:
            reader = min(readers, key=_in_hand)
            slot = waiting[0]
            if slot.pickled is None:
                slot.pickled = bytes(ForkingPickler.dumps(slot.task))
            size = len(slot.pickled) + _HEADER_BYTES
            if reader.assigned and (
                reader.in_hand >= self._ahead or reader.pipe_bytes + size > reader.pipe_room
            ):
                return
            waiting.popleft()
            try:
                reader.tasks.send_bytes(slot.pickled)
            except OSError as exc:
                raise self._died(reader) from exc
            slot.pickled = None
            slot.size = size
            slot.reader = reader
            reader.assigned.append(slot)
            reader.in_hand += slot.weight
            reader.pipe_bytes += size

    def _collect(self) -> None:
        """Take every result a worker has finished sending, without waiting."""
        for reader in self._readers:
            while reader.assigned and reader.results.poll():
                self._receive(reader)

    def _receive(self, reader: _Reader) -> None:
        """Take ``reader``'s next result (waiting for it): its oldest unit's."""
        try:
            value = reader.results.recv()
        except (EOFError, OSError) as exc:
            raise self._died(reader) from exc
        if isinstance(value, _Failed):
            raise RuntimeError(f"a worker process could not read a unit: {value.reason}")
        slot = reader.assigned.popleft()
        reader.in_hand -= slot.weight
        reader.pipe_bytes -= slot.size
        slot.result = value
        slot.done = True

    def _died(self, reader: _Reader) -> ReaderDied:
        reader.process.join(timeout=1.0)
        code = reader.process.exitcode
        how = "is gone" if code is None else f"ended with exit code {code}"
        return ReaderDied(
            f"a worker process reading transcripts (pid {reader.process.pid}) {how} before "
            "sending what it read; this import stopped, and what it committed before is kept "
            "— run it again"
        )

    def close(self, *, finished: bool) -> None:
        """End the workers: each takes its end-of-work mark and exits (``finished``),
        else or after ``END_WAIT_SECONDS``, they are ended."""
        readers, self._readers = self._readers, []
        if finished:
            for reader in readers:
                with contextlib.suppress(OSError):
                    reader.tasks.send(None)
            for reader in readers:
                reader.process.join(timeout=END_WAIT_SECONDS)
        for reader in readers:
            if reader.process.is_alive():
                reader.process.terminate()
            reader.process.join()
            reader.tasks.close()
            reader.results.close()


def _done(slot: _Slot[Any, Any]) -> bool:
    return slot.done


def _in_hand(reader: _Reader) -> float:
    return reader.in_hand


def _room(connection: Connection) -> int:
    """The bytes ``connection``'s pipe holds, where the system says (Linux), else
    ``UNIT_PIPE_ROOM``."""
    asking = getattr(fcntl, "F_GETPIPE_SZ", None) if fcntl is not None else None
    if asking is not None:
        with contextlib.suppress(OSError):
            return int(fcntl.fcntl(connection.fileno(), asking))
    return UNIT_PIPE_ROOM


def _widen(connection: Connection) -> None:
    """Ask for ``RESULT_PIPE_BYTES`` of room in ``connection``'s pipe, where the system
    lets this process (Linux); the default room stays otherwise."""
    setting = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if setting is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(connection.fileno(), setting, RESULT_PIPE_BYTES)


def _serve(
    tasks: Connection,
    results: Connection,
    read: Callable[[Any], Any],
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
    inherited: Sequence[Connection],
) -> None:
    """A worker: read each unit that comes in, send back its result, until the end mark
    (None) or the end of the pipe."""
    for connection in inherited:
        connection.close()
    # Ctrl-C reaches the whole process group: the importing process handles it and
    # ends its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            task = tasks.recv()
        except EOFError:
            return
        if task is None:
            return
        try:
            result = read(task)
        except BaseException as exc:  # reported to the importer, not lost
            results.send(_Failed(f"{type(exc).__name__}: {str(exc)[:300]}"))
            return
        try:
            results.send(result)
        except Exception as exc:  # a result that cannot be pickled
            results.send(_Failed(f"{type(exc).__name__}: {str(exc)[:300]}"))
            return
