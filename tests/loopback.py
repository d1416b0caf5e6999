"""Start a Proctor server subprocess on a free loopback port and wait until it listens."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

PORT_CLAIMS = Path(tempfile.gettempdir()) / "proctor-test-ports"
"""One lock file per port handed out: held by the test process that was given the port."""

_claimed: list[int] = []
"""File descriptors of this process's port claims, held until it exits."""


def free_port() -> int:
    """A loopback port nothing listens on right now and no other test process was given.

    The kernel picks a free port; between this probe and the server's own ``bind`` another
    test process (a pytest-xdist worker, another test run) could be handed the same one, so
    the port is claimed with a lock file that this process holds until it exits, and a port
    someone else claimed is passed over.
    """
    PORT_CLAIMS.mkdir(exist_ok=True)
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        claim = os.open(PORT_CLAIMS / str(port), os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(claim)
            continue
        _claimed.append(claim)
        return port


def _wait_for(port: int, process: subprocess.Popen[bytes], deadline: float) -> None:
    stop = time.monotonic() + deadline
    while time.monotonic() < stop:
        if process.poll() is not None:
            assert process.stderr is not None
            raise AssertionError(f"{process.args!r} exited: {process.stderr.read()!r}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port}")


@contextmanager
def serving(
    command: Sequence[str], env: Mapping[str, str], port: int, deadline: float = 60.0
) -> Iterator[None]:
    """Run ``command`` (which listens on ``port``) for the duration of the block.

    A ``proctor serve`` started here keeps its search indexer idle until a search asks
    (``PROCTOR_SERVE_INDEX=0``, unless ``env`` or ``--index`` says otherwise): embedding
    the examples in every test server would cost each test seconds of CPU.
    """
    process = subprocess.Popen(
        list(command),
        env={"PROCTOR_SERVE_INDEX": "0", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(port, process, deadline)
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
