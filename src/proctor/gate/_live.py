"""The gate kept live between requests: each session's history advanced by what its log gained.

``LiveGate`` answers the gate requests of a long-lived process (``proctor serve``). The
first request about a conversation reads its history once, exactly as ``proctor gate``
does (the stored conversation, then every event of the transcript file the store lacks),
and feeds it to the conversation's supervisor. Later requests read only what the
transcript file gained since: its new complete lines, plus the earlier lines those
complete (the line holding the ``tool_use`` of a result that just arrived, the first line
of an assistant message Claude Code is still writing line by line), so a request costs
what the session grew by, not what it holds. Events are fed as ``GateService.observe``
feeds them: only those not seen yet, in the order the transcript gives them, the proposed
call left out of its own history.

The file is checked on every request by device, inode, size and modification time: one
that shrank, was replaced, or was rewritten in place is read again from the start (the
store with it), as if the session were new. A request without a transcript file reads
the stored conversation each time, as before. Sessions live in a bounded LRU; requests
about one session are answered one at a time, requests about different sessions in
parallel.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from proctor.errors import ConfigError
from proctor.gate._decide import policy_unusable
from proctor.gate._history import StoredReader, load_history, read_fragment
from proctor.gate._request import GateRequest
from proctor.gate._state import GateService, HeldConversation, PolicyCache
from proctor.rules import Event, GateDecision, Policy, Rule

if TYPE_CHECKING:
    from proctor.store import StoreReader

Warn = Callable[[str], None]

QUICK_GROWTH = 256 * 1024
"""The most a log may have grown for ``try_decide`` to read it on the caller's thread."""


@dataclass(slots=True)
class _Log:
    """How far a session's transcript file has been read, and where its open items start."""

    path: str
    identity: tuple[int, int]
    """Device and inode: a different file at the same path is read again from the start."""
    size: int
    """Bytes read: the end of the last complete line."""
    mtime_ns: int
    starts: dict[str, int] = field(default_factory=dict)
    """``t:<tool_use id>`` / ``m:<message id>`` → offset of the first line carrying it."""
    revisit: int | None = None
    """Where the proposed call's line starts: it was left out of its own history, so the
    next request reads it again (the call is history then, answered or not)."""


@dataclass(slots=True)
class _Session:
    lock: threading.Lock = field(default_factory=threading.Lock)
    log: _Log | None = None
    loaded: bool = False


@dataclass(slots=True)
class KeptSession:
    """One session's whole live state, handed from one process to the next (``_kept``)."""

    conversation: HeldConversation
    log: _Log


@dataclass(slots=True)
class LiveGateCounters:
    """What the live gate read, for tests and benchmarks (bounded work, not wall time)."""

    full_reads: int = 0
    """Histories read from the start (first request, replaced or rewound file, eviction)."""
    bytes_parsed: int = 0
    """Transcript bytes handed to the adapter by incremental reads."""


class LiveGate:
    """Gate decisions from per-session supervisors advanced by the transcript's new lines.

    Args:
        policy: one policy for every conversation (default: found per request's ``cwd``).
        rules: the rules to run (default: every built-in rule).
        max_sessions: sessions kept (least recently used dropped, read again when asked).
        policies: where policies found per request are cached.
        stored_reader: reads a stored conversation when a history is read from the start,
            instead of the ``store`` given to ``decide`` (the hook's ``sqlite3`` reader).
        sweep_stale: first remove the scratch folders of processes that stopped without
            removing theirs (a server does; a hook deciding one call skips the 0.3 ms).
    """

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        rules: Sequence[Rule] | None = None,
        max_sessions: int = 256,
        policies: PolicyCache | None = None,
        stored_reader: StoredReader | None = None,
        sweep_stale: bool = True,
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self._service = GateService(
            policy=policy, rules=rules, max_conversations=max_sessions, policies=policies
        )
        self._max = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()
        self._scratch = _scratch_folder(sweep_stale)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._scratch, True)
        self._parses = itertools.count()
        self._stored_reader = stored_reader
        self.counters = LiveGateCounters()

    @property
    def service(self) -> GateService:
        """The per-conversation supervisors behind the decisions."""
        return self._service

    def __len__(self) -> int:
        return len(self._sessions)

    def close(self) -> None:
        """Remove the scratch folder fragments are parsed in."""
        self._finalizer()

    def decide(
        self, request: GateRequest, store: StoreReader | None, *, warn: Warn | None = None
    ) -> GateDecision:
        """Bring the conversation up to date with its history, then decide on the call.

        ``store`` is read only when a history is read from the start.
        """
        session = self._session(request.conversation_id)
        with session.lock:
            try:
                self._update(session, request, store, warn)
                return self._service.decide(request)
            except ConfigError as exc:
                return policy_unusable(exc)  # as `proctor gate` answers: ask, saying what to fix

    def try_decide(
        self, request: GateRequest, *, max_growth: int = QUICK_GROWTH
    ) -> GateDecision | None:
        """Decide now if that costs only reading the log's few new lines; else None.

        None means: the session is not held, another request about it is being answered,
        its history must be read from the start, or the log grew by more than
        ``max_growth`` bytes — call ``decide`` (off the event loop). Never waits, never
        reads the store: an async server calls it on its event loop.
        """
        with self._lock:
            session = self._sessions.get(request.conversation_id)
            if session is not None:
                self._sessions.move_to_end(request.conversation_id)
        if session is None or not session.lock.acquire(blocking=False):
            return None
        try:
            log = session.log
            if (
                not session.loaded
                or request.conversation_id not in self._service
                or log is None
                or log.path != request.transcript_path
            ):
                return None
            now = _stat(log.path)
            if now is None or now.st_size - log.size > max_growth:
                return None
            events = self._read_new(log, request)
            if events is None:
                return None  # replaced or rewound: nothing was read, `decide` reads it whole
            self._service.observe(request.conversation_id, events)
            return self._service.decide(request)
        except ConfigError as exc:
            return policy_unusable(exc)
        finally:
            session.lock.release()

    def kept(self, conversation_id: str) -> KeptSession | None:
        """The session's state to hand to a later process; None when it follows no log."""
        session = self._sessions.get(conversation_id)
        held = self._service.held(conversation_id)
        if session is None or held is None or not session.loaded or session.log is None:
            return None
        return KeptSession(held, session.log)

    def adopt(self, conversation_id: str, kept: KeptSession) -> None:
        """Take up a session where the process that kept it left off."""
        session = self._session(conversation_id)
        self._service.hold(conversation_id, kept.conversation)
        session.log, session.loaded = kept.log, True

    def _session(self, conversation_id: str) -> _Session:
        with self._lock:
            session = self._sessions.get(conversation_id)
            if session is None:
                session = self._sessions[conversation_id] = _Session()
            self._sessions.move_to_end(conversation_id)
            while len(self._sessions) > self._max:
                gone, _ = self._sessions.popitem(last=False)
                self._service.forget(gone)
            return session

    def _update(
        self, session: _Session, request: GateRequest, store: StoreReader | None, warn: Warn | None
    ) -> None:
        path = request.transcript_path
        held = session.loaded and request.conversation_id in self._service
        if not path:
            # No log to follow: the stored conversation is the history, read each time.
            self._read_all(session, request, store, warn, fresh=not held)
            return
        log = session.log
        if not held or log is None or log.path != path:
            self._read_all(session, request, store, warn, fresh=True)
            return
        events = self._read_new(log, request)
        if events is None:
            self._read_all(session, request, store, warn, fresh=True)
            return
        self._service.observe(request.conversation_id, events)

    def _read_all(
        self,
        session: _Session,
        request: GateRequest,
        store: StoreReader | None,
        warn: Warn | None,
        *,
        fresh: bool,
    ) -> None:
        self.counters.full_reads += 1
        before = _stat(request.transcript_path)
        history = load_history(request, store, stored_reader=self._stored_reader)
        if warn is not None:
            for note in history.notes:
                warn(note)
        if fresh:
            self._service.forget(request.conversation_id)
        self._service.observe(request.conversation_id, history.events, context=history.context)
        session.loaded = True
        session.log = None
        if request.transcript_path and before is not None:
            session.log = _index(request.transcript_path, before)
            _revisit_later(session.log, request)

    def _read_new(self, log: _Log, request: GateRequest) -> list[Event] | None:
        """Events of the lines the log gained; None when it must be read from the start."""
        now = _stat(log.path)
        if now is None or (now.st_dev, now.st_ino) != log.identity or now.st_size < log.size:
            return None
        if now.st_size == log.size and now.st_mtime_ns != log.mtime_ns:
            return None  # rewritten in place
        with open(log.path, "rb") as handle:
            start = end = log.size
            chunk = b""
            if now.st_size > log.size:
                handle.seek(log.size)
                chunk = handle.read(now.st_size - log.size)
                # A last line still being written is left for the next request.
                chunk = chunk[: chunk.rfind(b"\n") + 1]
                start = _take(chunk, log.size, log.starts)
                end = log.size + len(chunk)
            if log.revisit is not None:
                start, log.revisit = min(start, log.revisit), None
            if start == end:
                return []
            if start < log.size:
                handle.seek(start)
                chunk = handle.read(end - start)
        log.size, log.mtime_ns = end, now.st_mtime_ns
        events = self._events(chunk, request)
        _revisit_later(log, request)
        return events

    def _events(self, fragment: bytes, request: GateRequest) -> list[Event]:
        assert request.transcript_path is not None
        # A folder of its own per parse, removed after: the adapter recognises a session log
        # or a sub-agent's log by its name, and parses of different sessions run in parallel.
        # A new file each time, not one rewritten in place (truncate, write), which ext4
        # flushes to disk on close: milliseconds on a busy disk.
        folder = self._scratch / str(next(self._parses))
        folder.mkdir()
        target = folder / Path(request.transcript_path).name
        try:
            target.write_bytes(fragment)
            self.counters.bytes_parsed += len(fragment)
            trace = read_fragment(target, request.transcript_format, request.project)
        finally:
            with contextlib.suppress(OSError):
                target.unlink()
            with contextlib.suppress(OSError):
                folder.rmdir()
        if trace is None:
            return []
        leave_out = request.source_id
        return [event for event in trace.events if event.source_id != leave_out]


SCRATCH_PREFIX = "proctor-gate-"


def _scratch_folder(sweep_stale: bool) -> Path:
    """A new scratch folder named after this process; with ``sweep_stale``, once the
    folders of processes that stopped without removing theirs (killed, or ended by a signal
    Python did not handle) are removed: otherwise each such stop leaves one behind, in
    memory on Linux."""
    parent = _memory_folder()
    if sweep_stale:
        _remove_stale_scratch(Path(parent or tempfile.gettempdir()))
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=parent))


def _remove_stale_scratch(parent: Path) -> None:
    """Remove ``parent``'s scratch folders whose process no longer exists."""
    for folder in parent.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = folder.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _process_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _memory_folder() -> str | None:
    """Linux's shared-memory folder when usable: the adapter opens a fragment about ten
    times, which costs a disk file system far more than a tmpfs. None: the temp folder."""
    folder = "/dev/shm"
    return folder if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK) else None


def _revisit_later(log: _Log, request: GateRequest) -> None:
    if request.call_id is not None:
        log.revisit = log.starts.get(f"t:{request.call_id}")


def _stat(path: str | None) -> os.stat_result | None:
    if not path:
        return None
    try:
        return os.stat(path)
    except OSError:
        return None


def _index(path: str, stat: os.stat_result) -> _Log:
    """Where every call and assistant message of the file's complete lines starts."""
    log = _Log(path, (stat.st_dev, stat.st_ino), 0, stat.st_mtime_ns)
    try:
        with open(path, "rb") as handle:
            data = handle.read(stat.st_size)
    except OSError:
        return log
    end = data.rfind(b"\n") + 1
    _take(data[:end], 0, log.starts)
    log.size = end
    return log


def _take(chunk: bytes, offset: int, starts: dict[str, int]) -> int:
    """Index the chunk's lines (read from ``offset``); return where reading must start.

    That is ``offset``, or the start of an earlier line a new line completes: the line of
    the ``tool_use`` a new ``tool_result`` answers, the first line of an assistant message
    a new line continues.
    """
    start = offset
    for line in chunk.splitlines(keepends=True):
        for key, owns in _keys(line):
            earlier = starts.get(key)
            if earlier is not None:
                start = min(start, earlier)
            elif owns:
                starts[key] = offset
        offset += len(line)
    return start


def _keys(line: bytes) -> Iterator[tuple[str, bool]]:
    """The calls and messages a line names: (key, whether the line carries it)."""
    if b"tool_use" not in line and b'"assistant"' not in line:
        return
    try:
        record: Any = orjson.loads(line)
    except orjson.JSONDecodeError:
        return
    message = record.get("message") if isinstance(record, dict) else None
    if not isinstance(message, dict):
        return
    if message.get("role") == "assistant" and isinstance(message.get("id"), str):
        yield f"m:{message['id']}", True
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            yield f"t:{block['id']}", True
        elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            yield f"t:{block['tool_use_id']}", False
