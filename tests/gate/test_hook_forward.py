"""``proctor gate`` with a ``proctor serve`` running: the server decides, the hook stays lean.

A real server on a loopback port, in the test's ``PROCTOR_HOME`` (it advertises itself in
``server.json``); the hook runs as Claude Code runs it. On every payload fixture, the three
ways give the same bytes: the hook deciding alone, the hook forwarding to the server, and
the server's ``POST /api/gate/claude-code`` asked directly (what an ``http`` hook gets).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from proctor._util.paths import proctor_home
from proctor.gate._discovery import ServerAddress, advertise, discovery_path, running_server
from tests.backends import database_env, server_env
from tests.gate.helpers import append_session, ingest_session, on_backend, payload, write_session
from tests.loopback import free_port
from tests.server_zygote import forked_serving

pytestmark = pytest.mark.slow  # a server and one Python process per decision

FIXTURES = [
    "pre_tool_use_read.json",
    "pre_tool_use_bash_rm.json",
    "pre_tool_use_write.json",
    "pre_tool_use_mcp_refund.json",
    "pre_tool_use_webfetch_injected.json",
    "post_tool_use.json",
]
LEAN_HOOK = [sys.executable, "-X", "importtime", "-m", "proctor.gate"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def transcript(tmp_path: Path, project: Path, proctor_home: Path) -> Path:
    """The fixture session, imported, then grown by the tail the store has not seen."""
    logs = tmp_path / ".claude" / "projects" / "-tmp-shop"
    path = write_session(logs, "session.jsonl", project=project)
    ingest_session(path)
    append_session(path, "session_tail.jsonl", project=project)
    return path


def _env() -> dict[str, str]:
    return {**os.environ, **database_env(proctor_home(), create=False)}


def _hook(data: bytes, command: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(command, input=data, capture_output=True, timeout=120, env=_env())


@pytest.fixture
def server(transcript: Path) -> Iterator[str]:
    port = free_port()
    env = {**_env(), **server_env(proctor_home())}
    command = ["serve", "--port", str(port)]
    with forked_serving(command, env, port):
        assert running_server() is not None
        yield f"http://127.0.0.1:{port}"
    # Stopped by SIGTERM, uvicorn exits by the signal and the file stays: its process is gone.
    assert running_server() is None


def _payloads(project: Path, transcript: Path, names: list[str] = FIXTURES) -> list[bytes]:
    return [
        json.dumps(payload(name, project=project, transcript_path=str(transcript))).encode()
        for name in names
    ]


def test_forwarded_local_and_http_answers_are_the_same_bytes_on_every_fixture(
    project: Path, transcript: Path, tmp_path: Path
) -> None:
    # On PostgreSQL one payload, read from the stored session (helpers.on_backend): asked
    # all six in a row, the server reached the same 431 lines and arcs of proctor.store and
    # 261 of the gate's backend branches as asked that one; what the others add is the
    # live session's path that reads only the log's new lines, never the store.
    payloads = _payloads(project, transcript, on_backend(FIXTURES))
    alone = [_hook(data, [sys.executable, "-m", "proctor.cli.main", "gate"]) for data in payloads]
    assert all(done.returncode == 0 for done in alone), [d.stderr for d in alone]
    assert any(b'"deny"' in done.stdout for done in alone)  # the fixtures do decide
    port = free_port()
    env = {**_env(), **server_env(proctor_home())}
    command = ["serve", "--port", str(port)]
    with forked_serving(command, env, port):
        url = f"http://127.0.0.1:{port}/api/gate/claude-code"
        for data, local in zip(payloads, alone, strict=True):
            direct = httpx.post(url, content=data, headers={"Content-Type": "application/json"})
            assert direct.status_code == 200
            assert (direct.content + b"\n" if direct.json() else b"") == local.stdout
            for hook in ([sys.executable, "-m", "proctor.cli.main", "gate"], LEAN_HOOK):
                forwarded = _hook(data, hook)
                assert forwarded.returncode == 0
                assert forwarded.stdout == local.stdout


def test_a_forwarded_decision_imports_neither_the_rules_nor_pydantic_nor_sqlalchemy(
    project: Path, transcript: Path, server: str
) -> None:
    data = _payloads(project, transcript)[-2]  # the injected WebFetch: denied
    done = _hook(data, LEAN_HOOK)
    assert b'"permissionDecision":"deny"' in done.stdout
    imported = {line.split(b"|")[-1].strip() for line in done.stderr.splitlines()}
    for heavy in (b"proctor.rules", b"pydantic", b"sqlalchemy", b"fastapi", b"click"):
        assert heavy not in imported


@pytest.mark.parametrize("left_behind", ["dead-process", "nothing-listening"])
def test_a_stale_discovery_file_falls_back_to_deciding_alone(
    project: Path, transcript: Path, left_behind: str
) -> None:
    data = _payloads(project, transcript)[-2]
    alone = _hook(data, [sys.executable, "-m", "proctor.cli.main", "gate"])
    if left_behind == "dead-process":
        finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                                  capture_output=True, check=True)  # fmt: skip
        pid = int(finished.stdout)
    else:
        pid = os.getpid()  # alive, but no server on the port
    advertise(ServerAddress(pid, "127.0.0.1", free_port()))
    for hook in ([sys.executable, "-m", "proctor.cli.main", "gate"], LEAN_HOOK):
        done = _hook(data, hook)
        assert done.returncode == 0
        assert done.stdout == alone.stdout
        assert b'"permissionDecision":"deny"' in done.stdout


@pytest.mark.parametrize("hook_has_token", [True, False], ids=["token", "no-token"])
def test_a_server_with_a_token_is_asked_with_it_and_a_hook_without_decides_alone(
    project: Path, transcript: Path, hook_has_token: bool
) -> None:
    data = _payloads(project, transcript)[-2]
    alone = _hook(data, [sys.executable, "-m", "proctor.cli.main", "gate"])
    port = free_port()
    token = {"PROCTOR_API_TOKEN": "gate-forwarding-secret"}
    env = {**_env(), **server_env(proctor_home()), **token}
    command = ["serve", "--port", str(port)]
    with forked_serving(command, env, port):
        assert "gate-forwarding-secret" not in Path(discovery_path()).read_text()
        hook_env = {**_env(), **(token if hook_has_token else {})}
        done = subprocess.run(LEAN_HOOK, input=data, capture_output=True, timeout=120,
                              env=hook_env)  # fmt: skip
    assert done.stdout == alone.stdout
    imported = {line.split(b"|")[-1].strip() for line in done.stderr.splitlines()}
    # With the token the server answered; without it (401) the hook decided itself.
    assert (b"proctor.rules" in imported) is not hook_has_token
