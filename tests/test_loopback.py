"""The loopback helpers: a port handed to one test process is never handed to another."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests import loopback
from tests.conftest import REPO_ROOT

HOLD_A_PORT = textwrap.dedent(
    """
    import sys
    from tests import loopback
    print(loopback.free_port(), flush=True)
    sys.stdin.read()
    """
)
"""A test process that is given a port and keeps it until its input ends."""


class _Probe:
    """A socket whose ``bind`` to port 0 is given the next of ``ports`` (a kernel's pick)."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.port = 0

    def __enter__(self) -> _Probe:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def bind(self, _address: tuple[str, int]) -> None:
        self.port = self.ports.pop(0)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


def test_a_port_another_process_was_given_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_A_PORT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    ) as holder:
        assert holder.stdout is not None
        taken = int(holder.stdout.readline())
        other = taken + 1 if taken < 65535 else taken - 1
        picks = [taken, taken, other]
        monkeypatch.setattr(loopback.socket, "socket", lambda: _Probe(picks))

        assert loopback.free_port() == other
        assert picks == []


def test_a_port_is_handed_out_again_once_its_process_has_exited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    finished = subprocess.run(
        [sys.executable, "-c", "from tests import loopback; print(loopback.free_port())"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    port = int(finished.stdout)
    monkeypatch.setattr(loopback.socket, "socket", lambda: _Probe([port]))

    assert loopback.free_port() == port
