"""``proctor serve`` processes forked from one that imported the server already.

A ``proctor serve`` spends most of its start importing the app (uvicorn, FastAPI, the store,
pydantic's models: about 1.3 CPU s of the 2.2 a browser module's server costs to start),
then more importing the routers its first requests need, and the browser tests start a
dozen and more servers per worker. One process per test process (the zygote) imports what
``proctor serve`` imports and the API's routers, once, and nothing else: no store opened,
no thread, no event loop. Each server is a fork of it that takes the
environment and arguments the test gives it and runs the CLI's ``main`` with them, as
``python -m proctor.cli.main ARGS`` would: the same command, the same app built from the
same store, on its own port, in its own process that the test stops with SIGTERM.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

_ZYGOTE = r"""
import atexit, json, os, signal, sys, traceback
# What `proctor serve` imports before it listens (proctor/cli/serve.py).
import uvicorn
from proctor.api import create_app, allowed_hosts_from_env, check_bind
from proctor.cli.main import cli
from proctor.gate import ServerAddress, advertise, withdraw
from proctor.store import open_store
# And the API's routers, which a server imports when a request first needs one (each page of
# the UI asks for several): importing one builds its routes, the same as in the server.
import importlib
from proctor.api._app import _ROUTERS
for name in _ROUTERS:
    importlib.import_module(f"proctor.api.routers.{name}")
# Exited servers are reaped at once: a test sees one that stopped as gone (kill(pid, 0)).
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
sys.stdout.write("ready\n")
sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid:
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()
        continue
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["proctor", *request["args"]]
        try:
            cli.main(request["args"], prog_name="proctor")
            code = 0
        except SystemExit as ended:
            code = ended.code if isinstance(ended.code, int) else 0 if ended.code is None else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
"""


class _Zygote:
    """The forking process of this test process, started when the first server is asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def fork(self, args: Sequence[str], env: Mapping[str, str], log: Path) -> int:
        """A new server process running ``proctor ARGS`` with ``env``, stderr to ``log``."""
        with self._lock:
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            request = {"args": list(args), "env": dict(env), "log": str(log)}
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            answer = process.stdout.readline()
            assert answer.strip().isdigit(), f"the server zygote did not fork: {answer!r}"
            return int(answer)

    def _started(self) -> subprocess.Popen[str]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        # As the servers were started: with PATH only, so that the interpreter reads the
        # same (no) PYTHON* variables and imports from the same place.
        process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE],
            env={"PATH": os.environ.get("PATH", "")},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        ready = process.stdout.readline()
        assert ready == "ready\n", f"the server zygote did not start: {ready!r}"
        self._process = process
        return process

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
            if process is not None:
                assert process.stdin is not None
                process.stdin.close()
                process.wait(timeout=10)
                assert process.stdout is not None
                process.stdout.close()


_zygote = _Zygote()
atexit.register(_zygote.close)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    stop = time.monotonic() + 10
    while _alive(pid):
        if time.monotonic() > stop:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"server {pid} did not stop within 10 s of SIGTERM")
        time.sleep(0.02)


@contextmanager
def forked_serving(
    args: Sequence[str], env: Mapping[str, str], port: int, deadline: float = 60.0
) -> Iterator[None]:
    """``proctor ARGS`` (a server on ``port``) for the block, as ``tests.loopback.serving``
    runs ``python -m proctor.cli.main ARGS``: its search indexer idle until a search asks
    (``PROCTOR_SERVE_INDEX=0`` unless ``env`` says otherwise), stopped with SIGTERM."""
    import socket

    with tempfile.NamedTemporaryFile(prefix="proctor-serve-", suffix=".log") as log:
        pid = _zygote.fork(args, {"PROCTOR_SERVE_INDEX": "0", **env}, Path(log.name))
        try:
            stop = time.monotonic() + deadline
            while True:
                if not _alive(pid):
                    error = Path(log.name).read_text(errors="replace")
                    raise AssertionError(f"proctor {' '.join(args)} exited: {error}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    if time.monotonic() > stop:
                        raise AssertionError(f"nothing listened on port {port}") from None
                    time.sleep(0.05)
            yield
        finally:
            _stop(pid)
