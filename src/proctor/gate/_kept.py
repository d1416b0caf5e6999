"""The hook deciding alone takes up the session where the previous hook process left it.

Without a server, every ``proctor gate`` process used to read the session's history whole
(the stored conversation and the whole log) and replay it through every rule: half of its
work, growing with the session. Now the process that decides keeps the session's live
state — the supervisor after the history, the events it was fed, how far the log was
read — in ``$PROCTOR_HOME/cache/gate/sessions``, and the next hook process of that
session loads it and reads only the lines the log gained, exactly as ``proctor serve``
follows a session (``LiveGate``): the same decisions as the server's route, which are
those of the in-process gate (``tests/gate/test_kept.py``).

A kept state is used only for the same conversation, log, working folder, project and
policy option, the same stored conversation (its sources' count, revisions and update
times and its header, read with ``sqlite3``), the same Python and pydantic, and the same
Proctor code (size and modification time of every module of the packages a decision
runs); the file carries a digest of its contents. Anything else — another key, a file
cut short or damaged, one that cannot be unpickled, no SQLite store (PostgreSQL) — and
the history is read whole, as before; the decision never rests on a state it cannot
trust. A state that cannot be written is simply not kept. The folder holds at most
``MAX_SESSIONS`` files (the least recently written go first); it is readable by its
owner only, like the store beside it. The state is a pickle, read only from that folder:
whoever can write there can already change the store and the policy the gate obeys.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from urllib.parse import quote

from proctor.errors import ConfigError
from proctor.gate._decide import decide, policy_unusable
from proctor.gate._live import KeptSession, LiveGate
from proctor.gate._request import GateRequest
from proctor.gate._stored import no_database, read_stored_trace, sqlite_database
from proctor.rules import GateDecision, Trace, load_policy

Warn = Callable[[str], None]

FORMAT = b"proctor-gate-kept 1\n"
"""The first line of a kept state file; another first line is not read."""
MAX_SESSIONS = 64
"""Kept state files at most; writing a new one removes the least recently written."""
_CODE_PACKAGES = ("rules", "findings", "transcript", "sources", "gate", "_util")
"""The packages whose code a kept state depends on (with the modules at the top)."""

_SOURCES_MARK = """
SELECT count(*), max(updated_at), sum(revision) FROM sources WHERE conversation_id = ?
"""
_HEADER_MARK = """
SELECT c.header_hash, c.updated_at, p.name
FROM conversations AS c JOIN projects AS p ON p.project_id = c.project_id
WHERE c.conversation_id = ?
"""


def sessions_folder(cache: Path) -> Path:
    """Where kept session states live under the gate's cache folder."""
    return cache / "sessions"


def kept_path(cache: Path, conversation_id: str, transcript: str) -> Path:
    """The file a conversation's state is kept in while it follows ``transcript``."""
    named = f"{conversation_id}\n{transcript}".encode()
    return sessions_folder(cache) / f"{_digest(named)[:40]}.kept"


def decide_keeping(
    request: GateRequest, *, cache: Path, policy_path: Path | None, warn: Warn | None
) -> GateDecision:
    """Decide as ``decide`` does, from (and into) the session's kept state under ``cache``."""
    try:
        policy = load_policy(policy_path) if policy_path is not None else None
    except ConfigError as exc:
        return policy_unusable(exc)
    transcript = request.transcript_path
    database = sqlite_database()
    if not transcript or not os.path.isfile(transcript) or (database is None and not no_database()):
        # No log to follow (the store is the history, read each time), or not SQLite.
        return decide(request, policy_path=policy_path, warn=warn)
    try:
        stored_mark = _stored_mark(database, request.conversation_id)
    except sqlite3.Error:
        return decide(request, policy_path=policy_path, warn=warn)  # it says what went wrong
    key = _key(request, policy_path, stored_mark)
    path = kept_path(cache, request.conversation_id, transcript)
    kept = _remembered(path, key) or load_kept(path, key)

    def from_file(conversation_id: str) -> Trace | None:
        return None if database is None else read_stored_trace(database, conversation_id)

    notes: list[str] = []

    def noted(note: str) -> None:
        notes.append(note)
        if warn is not None:
            warn(note)

    live = LiveGate(policy=policy, max_sessions=1, stored_reader=from_file, sweep_stale=False)
    try:
        if kept is not None:
            session, kept_notes = kept
            live.adopt(request.conversation_id, session)
            for note in kept_notes:  # what reading it whole said, as each hook said it before
                if warn is not None:
                    warn(note)
        decision = live.decide(request, None, warn=noted)
        now = live.kept(request.conversation_id)
        if now is not None:
            read_whole = kept is None or live.counters.full_reads > 0
            kept_notes = tuple(notes) if read_whole else kept[1] if kept else ()
            written = save_kept(path, key, now, kept_notes)
            if _memory is not None:
                _memory.pop(path, None)
                if written is not None:
                    _memory[path] = (key, written, now, kept_notes)
    finally:
        live.close()
    return decision


def load_kept(path: Path, key: bytes) -> tuple[KeptSession, tuple[str, ...]] | None:
    """The kept state at ``path`` when it was kept under ``key`` and is whole; else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(FORMAT) + 2 * (len(key) + 1)
    if len(data) < head or not data.startswith(FORMAT):
        return None
    kept_key = data[len(FORMAT) : len(FORMAT) + len(key)]
    digest = data[len(FORMAT) + len(key) + 1 : head - 1]
    body = data[head:]
    if kept_key != key or digest != _digest(body).encode()[: len(key)]:
        return None
    try:
        value = pickle.loads(body)  # written by this module, digest checked above
    except Exception:  # a class renamed or removed since: read the history whole
        return None
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not isinstance(value[0], KeptSession)
        or not isinstance(value[1], tuple)
    ):
        return None
    return value[0], value[1]


def save_kept(
    path: Path, key: bytes, session: KeptSession, notes: tuple[str, ...]
) -> tuple[int, int, int, int] | None:
    """Keep the session's state at ``path`` under ``key``; a failure keeps nothing.

    Returns the written file's identity (device, inode, size, modification time), or None.
    """
    try:
        body = pickle.dumps((session, notes), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a rule holding something that cannot be pickled: nothing kept
        return None
    data = b"".join(
        (FORMAT, key, b"\n", _digest(body).encode()[: len(key)], b"\n", body)
    )  # fmt: skip
    written = None
    with suppress(OSError):
        new = not path.exists()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".kept-")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                status = os.fstat(file.fileno())
            os.replace(temporary, path)  # parallel hooks of one session: the last one wins
        except OSError:
            with suppress(OSError):
                os.unlink(temporary)
            return None
        written = _identity(status)
        if new:
            _prune(path.parent)
    return written


def keep_in_memory() -> None:
    """Remember each state this process writes, to take it up again without reading it back.

    For a process that makes many decisions (the warm gate process): its next call about
    a session adopts the very state it kept, in place of unpickling the file it wrote,
    as long as that file is still the one it wrote (same device, inode, size and
    modification time — another process writing the session replaces the file).
    """
    global _memory
    if _memory is None:
        _memory = {}


_memory: dict[Path, tuple[bytes, tuple[int, int, int, int], KeptSession, tuple[str, ...]]] | None
_memory = None
"""``keep_in_memory``'s states: path → key, file identity, state, notes."""


def _remembered(path: Path, key: bytes) -> tuple[KeptSession, tuple[str, ...]] | None:
    """The state this process wrote at ``path`` under ``key`` when the file is still it."""
    if _memory is None:
        return None
    remembered = _memory.pop(path, None)  # taken up (and changed) by this call, or stale
    if remembered is None or remembered[0] != key:
        return None
    try:
        on_disk = _identity(path.stat())
    except OSError:
        return None
    return (remembered[2], remembered[3]) if on_disk == remembered[1] else None


def _identity(status: os.stat_result) -> tuple[int, int, int, int]:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _prune(folder: Path) -> None:
    with suppress(OSError):
        # States, and what a process killed while writing one left behind.
        files = [
            entry
            for entry in os.scandir(folder)
            if entry.name.endswith(".kept") or entry.name.startswith(".kept-")
        ]
        if len(files) <= MAX_SESSIONS:
            return
        files.sort(key=lambda entry: entry.stat().st_mtime_ns)
        for entry in files[: len(files) - MAX_SESSIONS]:
            with suppress(OSError):
                os.unlink(entry.path)


def _stored_mark(database: Path | None, conversation_id: str) -> object:
    """What changes whenever the store writes the conversation (None: nothing stored)."""
    if database is None:
        return None
    uri = f"file:{quote(str(database.resolve()))}?mode=ro"
    connection = sqlite3.connect(uri, uri=True)
    try:
        header = connection.execute(_HEADER_MARK, (conversation_id,)).fetchone()
        if header is None:
            return None
        return (
            tuple(header),
            tuple(connection.execute(_SOURCES_MARK, (conversation_id,)).fetchone()),
        )
    finally:
        connection.close()


def _key(request: GateRequest, policy_path: Path | None, stored_mark: object) -> bytes:
    """The digest of everything a kept state is valid for."""
    import pydantic.version

    parts = (
        FORMAT,
        sys.version,
        pydantic.version.VERSION,
        _code_mark(),
        request.conversation_id,
        request.transcript_path,
        request.transcript_format,
        request.cwd,
        request.project,
        None if policy_path is None else str(policy_path.resolve()),
        stored_mark,
    )
    return _digest(repr(parts).encode()).encode()[:40]


def _code_mark() -> list[tuple[str, int, int]]:
    """Size and modification time of every module of the packages a decision runs."""
    root = Path(__file__).resolve().parent.parent
    mark: list[tuple[str, int, int]] = []
    folders = [root, *(root / name for name in _CODE_PACKAGES)]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    mark.append((entry.path, stat.st_size, stat.st_mtime_ns))
                elif folder != root and entry.is_dir() and entry.name != "__pycache__":
                    folders.append(Path(entry.path))
    mark.sort()
    return mark


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
