"""The warm gate process: the hook's decision made by a process that imported the rules once.

``python -m proctor.gate._daemon <base>`` is started by a hook that found none (``_warm``).
It takes the lock ``<base>.lock`` (a second one exits at once: never more than one per
key), imports what a decision needs, removes whatever socket a killed predecessor left at
``<base>.sock`` and listens there (mode 0600, in the user's own folder). Each connection is
one hook call, answered one at a time: the connecting process must be of this user
(``SO_PEERCRED``) and of the same key (the digest of the code, Python and environment it
computed itself); the warm process moves to the hook's working folder and runs
``decide_alone`` on the payload exactly as the hook would have, with ``sys.stdout``,
``sys.stderr`` and ``sys.exit`` caught: the hook prints those bytes and exits with that
status. The payload is untrusted data, parsed by the same code as in the hook (bounded by
``MAX_PAYLOAD``). Sessions are followed through the same kept state files
(``$PROCTOR_HOME/cache/gate/sessions``) as a hook deciding alone, so it does not matter
which process makes a session's next decision.

It exits after ``idle_seconds()`` without a call, when its socket is removed or replaced,
when a hook of another key reaches it, and on SIGTERM; it removes its socket (if still its
own) on the way out. A process killed outright leaves the socket behind: connecting to it
is refused, the hook decides itself and starts a new process, which replaces the socket.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator

from proctor.gate._warm import (
    MAX_PAYLOAD,
    PROTOCOL,
    _peer_uid,
    _private,
    _read_all,
    _short,
    answer_bytes,
    code_key,
    idle_seconds,
)

REQUEST_TIMEOUT_S = 10.0
"""How long a connected hook may take to send its payload."""
_CHECK_EVERY_S = 30.0
"""While idle, how often the process checks that its socket is still its own."""
_MAX_REQUEST = MAX_PAYLOAD + (1 << 16)
"""A payload the hook would send, with its key and working folder."""


class _Stopped(BaseException):
    """SIGTERM: stop now (not an ``Exception`` or ``SystemExit`` a decision would catch)."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def serve(base: str) -> int:
    """Answer hook calls on ``<base>.sock`` until idle; the process's exit status."""
    import fcntl

    try:
        os.makedirs(os.path.dirname(base), mode=0o700, exist_ok=True)
        if not _private(os.path.dirname(base)):
            return 1  # another user could put a socket there: the hooks do not use it
        lock = os.open(base + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another one runs (or the folder is gone)
    key = code_key().encode()
    try:
        _warm_up()
    except Exception:  # a hook deciding alone says what is wrong; none starts again soon
        _mark_failed(base)
        return 1
    if code_key().encode() != key:
        return 0  # the code changed while it was imported: the next hook starts another
    path = base + ".sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _short(path) as address:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address)  # left by a process that was killed: nobody listens
            mask = os.umask(0o177)
            try:
                listener.bind(address)
            finally:
                os.umask(mask)
            listener.listen(64)
            mine = os.stat(address)
    except OSError:
        listener.close()
        _mark_failed(base)
        return 1
    with contextlib.suppress(FileNotFoundError):
        os.unlink(base + ".failed")
    signal.signal(signal.SIGTERM, _stop)
    try:
        _loop(listener, key, path, (mine.st_dev, mine.st_ino))
    except _Stopped:
        pass
    finally:
        listener.close()
        if _identity(path) == (mine.st_dev, mine.st_ino):
            with _short(path) as address, contextlib.suppress(OSError):
                os.unlink(address)
        os.close(lock)
    return 0


def _loop(listener: socket.socket, key: bytes, path: str, mine: tuple[int, int]) -> None:
    idle = idle_seconds()
    last = time.monotonic()
    while True:
        left = idle - (time.monotonic() - last)
        if left <= 0:
            return
        listener.settimeout(min(left, _CHECK_EVERY_S))
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            if _identity(path) != mine:
                return  # removed or replaced: no hook can reach this process any more
            continue
        with connection:
            stop = _answer(connection, key)
        last = time.monotonic()
        if stop:
            return


def _answer(connection: socket.socket, key: bytes) -> bool:
    """Answer one hook call; True when this process should exit (a hook of another key)."""
    try:
        if _peer_uid(connection) != os.getuid():
            return False  # not this user's: nothing is read, nothing answered
        connection.settimeout(REQUEST_TIMEOUT_S)
        request = _read_all(connection, _MAX_REQUEST)
        parts = request.split(b"\0", 3)
        if len(request) > _MAX_REQUEST or len(parts) != 4 or parts[0] != PROTOCOL:
            return False
        if parts[1] != key:
            return True  # the code or the environment changed: this process is stale
        cwd, payload = os.fsdecode(parts[2]), parts[3]
        connection.sendall(decide(payload, cwd))
    except OSError:
        return False
    return False


def decide(payload: bytes, cwd: str) -> bytes:
    """The answer to one hook call, as ``decide_alone`` in the hook's own process gives it.

    ``decide_alone`` less what it does to import faster (the rules are imported already),
    with pydantic told there are no plugins, as there.
    """
    from proctor.gate._alone import _decide
    from proctor.gate._lean import PLUGINS_VARIABLE

    try:
        os.chdir(cwd)
    except OSError:
        return b""  # not an answer: the hook decides itself
    status = 0
    set_here = PLUGINS_VARIABLE not in os.environ
    if set_here:
        os.environ[PLUGINS_VARIABLE] = "__all__"
    try:
        with _captured() as (out, err):
            try:
                _decide(payload, policy_path=None, project=None)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except Exception:
                return b""  # not an answer: the hook decides itself, and says what went wrong
    finally:
        if set_here:
            os.environ.pop(PLUGINS_VARIABLE, None)
    return answer_bytes(out.getvalue(), err.getvalue(), status)


@contextlib.contextmanager
def _captured() -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """``sys.stdout`` and ``sys.stderr`` written into bytes, as the hook's would be."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = streams
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = saved
        for stream in streams:
            stream.detach()


def _warm_up() -> None:
    """Import what a decision needs, as the hook does (kept patterns and dataclass code)."""
    from proctor.gate._lean import deciding_alone

    with deciding_alone():
        import proctor.gate._alone
        import proctor.gate._claude_code
        import proctor.gate._kept

    # Each call takes up the state the previous one kept without reading it back from disk.
    proctor.gate._kept.keep_in_memory()


def _identity(path: str) -> tuple[int, int] | None:
    try:
        with _short(path) as address:
            status = os.stat(address)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _mark_failed(base: str) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(base + ".failed", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(descriptor)


if __name__ == "__main__":
    os.chdir("/")  # started where a hook stood: hold no project folder (each call moves anyway)
    sys.exit(serve(sys.argv[1]) if len(sys.argv) == 2 else 2)
