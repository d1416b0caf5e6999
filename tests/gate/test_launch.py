"""The ``proctor`` executable's entry point (``proctor.cli.launch``): ``proctor gate`` alone
goes to the hook's lean path without click, and answers as the click command does.

Each payload fixture (and bytes that are not a payload) is answered by the entry point and
by ``python -m proctor.cli.main gate`` — the click group the executable used to be — in a
session stored in this test's home; stdout, stderr and exit status must be the same, and
the entry point's process must not import click. Deciding alone here (the warm gate process
is off in tests; tests/gate/test_daemon.py covers it). On PostgreSQL one payload, read
from the stored session (``helpers.on_backend``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor._util.paths import proctor_home
from tests.backends import ON_POSTGRES, database_env
from tests.gate.helpers import FIXTURES, ingest_session, on_backend, payload, write_session

pytestmark = pytest.mark.slow  # two Python processes per payload

LAUNCH = (
    "import sys; sys.argv = ['proctor', *sys.argv[1:]]; from proctor.cli.launch import main; main()"
)
ENTRY_POINT = [sys.executable, "-X", "importtime", "-c", LAUNCH]
CLICK_GROUP = [sys.executable, "-m", "proctor.cli.main"]


def _run(command: list[str], data: bytes) -> tuple[bytes, bytes, int]:
    env = {**os.environ, **database_env(proctor_home(), create=False)}
    done = subprocess.run(command, input=data, capture_output=True, timeout=120, env=env)
    return done.stdout, done.stderr, done.returncode


def _split_importtime(stderr: bytes) -> tuple[bytes, list[str]]:
    lines = stderr.splitlines(keepends=True)
    imported = [
        line.rsplit(b"|", 1)[-1].strip().decode()
        for line in lines
        if line.startswith(b"import time:")
    ]
    rest = b"".join(line for line in lines if not line.startswith(b"import time:"))
    return rest, imported


def _payloads(tmp_path: Path) -> list[bytes]:
    project = tmp_path / "shop"
    project.mkdir()
    logs = tmp_path / ".claude" / "projects" / "-tmp-shop"
    transcript = write_session(logs, "session.jsonl", project=project)
    ingest_session(transcript)
    names = sorted(path.name for path in FIXTURES.glob("*_tool_use*.json"))
    assert len(names) >= 6
    datas = [
        json.dumps(payload(name, project=project, transcript_path=str(transcript))).encode()
        for name in on_backend(names)
    ]
    # Bytes that are no payload are refused before any store is opened.
    return datas if ON_POSTGRES else [*datas, b"{not json", b""]


def test_proctor_gate_answers_as_the_click_command_without_importing_click(tmp_path: Path) -> None:
    for data in _payloads(tmp_path):
        out, err, status = _run([*ENTRY_POINT, "gate"], data)
        rest, imported = _split_importtime(err)
        assert "click" not in imported and "proctor.cli.main" not in imported, data
        assert (out, rest, status) == _run([*CLICK_GROUP, "gate"], data), data


def test_anything_else_is_the_click_group() -> None:
    out, err, status = _run([*ENTRY_POINT, "gate", "--help"], b"")
    assert status == 0 and b"--no-daemon" in out
    rest, imported = _split_importtime(err)
    assert "click" in imported and rest == b""
    out, _, status = _run([*ENTRY_POINT, "--version"], b"")
    assert status == 0 and out == _run([*CLICK_GROUP, "--version"], b"")[0]
