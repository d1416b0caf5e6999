"""Start a Proctor server subprocess on a free loopback port and wait until it listens."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
    command: Sequence[str], env: Mapping[str, str], port: int, deadline: float = 20.0
) -> Iterator[None]:
    """Run ``command`` (which listens on ``port``) for the duration of the block."""
    process = subprocess.Popen(
        list(command), env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _wait_for(port, process, deadline)
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
