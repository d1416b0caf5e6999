"""The hook's side of the warm gate process: ask it, or start one for the next calls.

Without a ``proctor serve`` to forward to, every hook process used to import the rules
before deciding (most of its cost). A warm gate process (``_daemon``) imports them once
and answers later hook processes over a Unix socket, as ``dmypy`` or ``eslint_d`` do: the
hook itself imports only ``os``, ``socket`` and ``hashlib``, sends its payload and prints
the answer — the bytes, warnings and exit status it would have produced deciding alone,
because the warm process runs exactly that code (``decide_alone``) on it.

The socket is ``$PROCTOR_HOME/run/gate-<key>.sock``. The key is a digest of everything the
decision's code depends on: the Python (executable, version, ``sys.path`` and each entry's
modification time, which an install or removal changes), the user, the environment
variables that steer Proctor, Python or pydantic, and the size and modification time of
every module of the Proctor packages a decision runs. Another key is another socket: a
process started before an upgrade, an edit or under another environment is never asked;
it exits when it has been idle ``idle_seconds()``. The folder is the user's own (mode
0700; the hook uses no socket in a folder another user could write), and the warm
process answers only connections of its own user (``SO_PEERCRED``).

Nothing answering — no socket, a socket left by a process that was killed, a folder that
is not private, an answer not in the expected shape within ``ANSWER_TIMEOUT_S`` — and the
hook decides in its own process as before, then starts a warm process for the next calls
(``start``): detached, at most one per key (a lock held while it lives), not again within
``RETRY_AFTER_S`` of one that could not listen. ``PROCTOR_GATE_DAEMON=0`` (or ``proctor
gate --no-daemon``) turns all of this off.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` imports enum and selectors (~10 ms of a hook)
import importlib
import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs the hook more than it decides
if TYPE_CHECKING:
    from socket import socket as Socket

DAEMON_VARIABLE = "PROCTOR_GATE_DAEMON"
"""``0`` / ``off`` / ``no`` / ``false``: never ask or start a warm gate process."""
IDLE_VARIABLE = "PROCTOR_GATE_DAEMON_IDLE"
"""Seconds a warm gate process waits for a call before it exits (default ``IDLE_S``)."""
IDLE_S = 600.0
"""How long a warm gate process stays without a call: ten minutes."""
PROTOCOL = b"proctor-gate-daemon 1"
"""The first bytes of every request and answer; another version is not spoken to."""
CONNECT_TIMEOUT_S = 0.5
ANSWER_TIMEOUT_S = 10.0
"""How long the hook waits for the answer (the warm process answers calls one at a time)."""
RETRY_AFTER_S = 600.0
"""After a warm process could not listen, how long hooks decide alone without starting one."""
MAX_PAYLOAD = 64 << 20
"""Larger payloads are decided in the hook's own process."""
MAX_ANSWER = 16 << 20
_CODE_PACKAGES = ("rules", "findings", "transcript", "sources", "gate", "_util")
"""As ``_kept``'s: the packages whose code a decision runs (with the modules at the top)."""
_STEERING = ("PROCTOR_", "PYDANTIC_", "PYTHON", "PG")
"""Environment variables with these prefixes are part of the key (and those ``_NAMED``);
``PG``: libpq's, read where the store is PostgreSQL."""
_NAMED = ("HOME", "TZ", "LANG", "LC_ALL", "LC_CTYPE")


def enabled() -> bool:
    """Whether the warm gate process may be asked and started (``PROCTOR_GATE_DAEMON``)."""
    value = os.environ.get(DAEMON_VARIABLE, "").strip().lower()
    return value not in ("0", "off", "no", "false")


def idle_seconds() -> float:
    """How long a warm gate process stays without a call (``PROCTOR_GATE_DAEMON_IDLE``)."""
    try:
        value = float(os.environ.get(IDLE_VARIABLE, ""))
    except ValueError:
        return IDLE_S
    return value if value > 0 else IDLE_S


def run_folder() -> str:
    """``$PROCTOR_HOME/run``: where the warm gate processes listen (as ``proctor_home``)."""
    home = os.environ.get("PROCTOR_HOME") or os.path.join(os.path.expanduser("~"), ".proctor")
    return os.path.join(os.path.expanduser(home), "run")


def base_path() -> str:
    """The socket's path without its suffix: ``<run folder>/gate-<key>``."""
    return os.path.join(run_folder(), f"gate-{code_key()[:24]}")


def code_key() -> str:
    """The digest of what a decision depends on besides its payload and files it reads."""
    steering = sorted(
        (name, value)
        for name, value in os.environ.items()
        if name.startswith(_STEERING) or name in _NAMED
    )
    parts = (
        PROTOCOL,
        sys.executable,
        sys.version,
        os.getuid(),
        # Not sys.path[0]: the working folder (``-m``) or the script's, which differ by caller.
        [(entry, _mtime(entry)) for entry in sys.path[1:]],
        steering,
        _code_mark(),
    )
    return _sha256(repr(parts).encode("utf-8", "surrogateescape"))


def answered(payload: bytes) -> bool:
    """Print the warm process's answer to ``payload`` (exit with its status); False: none."""
    if not enabled():
        return False
    answer = ask(payload)
    if answer is None:
        return False
    out, err, status = answer
    if err:
        sys.stderr.buffer.write(err)
        sys.stderr.buffer.flush()
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    if status:
        sys.exit(status)
    return True


def ask(payload: bytes, base: str | None = None) -> tuple[bytes, bytes, int] | None:
    """What the warm gate process answers ``payload``: stdout, stderr, exit status.

    None when no warm process of this key answers as expected (decide in this process).
    """
    if len(payload) > MAX_PAYLOAD:
        return None
    base = base_path() if base is None else base
    if not _private(os.path.dirname(base)):
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None  # the warm process could not stand where this process stands
    request = b"".join(
        (PROTOCOL, b"\0", code_key().encode(), b"\0", os.fsencode(cwd), b"\0", payload)
    )
    try:
        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        connection.settimeout(CONNECT_TIMEOUT_S)
        with _short(base + ".sock") as address:
            connection.connect(address)
        if _peer_uid(connection) != os.getuid():
            return None
        connection.settimeout(ANSWER_TIMEOUT_S)
        connection.sendall(request)
        connection.shutdown(_socket.SHUT_WR)
        answer = _read_all(connection, MAX_ANSWER)
    except (OSError, ValueError):
        return None
    finally:
        connection.close()
    return parse_answer(answer)


def answer_bytes(out: bytes, err: bytes, status: int) -> bytes:
    """The warm process's answer: what the hook prints on stdout and stderr, and exits with."""
    return b"%s %d %d %d\n%s%s" % (PROTOCOL, status, len(out), len(err), out, err)


def parse_answer(answer: bytes) -> tuple[bytes, bytes, int] | None:
    """``answer_bytes``'s parts; None for anything else (a refusal, a cut-off answer)."""
    head, newline, body = answer.partition(b"\n")
    fields = head.split(b" ")
    if not newline or len(fields) != 5 or b" ".join(fields[:2]) != PROTOCOL:
        return None
    try:
        status, out_size, err_size = (int(field) for field in fields[2:])
    except ValueError:
        return None
    if out_size < 0 or err_size < 0 or out_size + err_size != len(body) or status not in (0, 1):
        return None
    return body[:out_size], body[out_size:], status


def start(base: str | None = None) -> bool:
    """Start a warm gate process for this key unless one runs (or just failed to listen)."""
    import fcntl
    import time

    base = base_path() if base is None else base
    folder = os.path.dirname(base)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not _private(folder):
            return False
        failed = os.stat(base + ".failed")
    except FileNotFoundError:
        pass
    except OSError:
        return False
    else:
        if time.time() - failed.st_mtime < RETRY_AFTER_S:
            return False
    try:
        lock = os.open(base + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # one is running (or starting)
    finally:
        os.close(lock)  # released: the started process takes it
    argv = [sys.executable, "-m", "proctor.gate._daemon", base]
    quiet = [
        (os.POSIX_SPAWN_OPEN, descriptor, os.devnull, os.O_RDWR, 0) for descriptor in (0, 1, 2)
    ]
    try:  # detached, no terminal, in a session of its own; nothing to reap in a hook process
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=quiet, setsid=True)
    except OSError:
        return False
    return True


def _private(folder: str) -> bool:
    """Whether ``folder`` is this user's and nobody else's (no socket elsewhere is trusted)."""
    try:
        status = os.stat(folder)
    except OSError:
        return False
    return status.st_uid == os.getuid() and status.st_mode & 0o077 == 0


def _peer_uid(connection: Socket | _socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket (Linux ``SO_PEERCRED``)."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = connection.getsockopt(_socket.SOL_SOCKET, option, 12)
    return int.from_bytes(credentials[4:8], sys.byteorder)  # struct ucred: pid, uid, gid


class _short:
    """A path for ``bind``/``connect`` short enough for ``sockaddr_un`` (107 bytes).

    A longer one is reached through the folder's descriptor (``/proc/self/fd/<n>/<name>``).
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._folder: int | None = None

    def __enter__(self) -> str:
        if len(os.fsencode(self._path)) < 100 or not os.path.isdir("/proc/self/fd"):
            return self._path
        folder, name = os.path.split(self._path)
        self._folder = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return f"/proc/self/fd/{self._folder}/{name}"

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            os.close(self._folder)


def _read_all(connection: Socket | _socket.socket, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        part = connection.recv(65536)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _sha256(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, from CPython's own module where it has one.

    ``hashlib`` initialises OpenSSL on import (~4 ms of a hook); the digest is the same.
    """
    for name in ("_sha2", "_sha256"):  # CPython 3.12 and later, 3.11
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        return str(module.sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return None


def _code_mark() -> list[tuple[str, int, int]]:
    """Size and modification time of every module of the packages a decision runs."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    mark: list[tuple[str, int, int]] = []
    folders = [root, *(os.path.join(root, name) for name in _CODE_PACKAGES)]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                status = entry.stat()
                mark.append((entry.path, status.st_size, status.st_mtime_ns))
            elif folder != root and entry.name != "__pycache__" and entry.is_dir():
                folders.append(entry.path)
    mark.sort()
    return mark
