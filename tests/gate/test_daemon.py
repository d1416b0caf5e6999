"""The warm gate process: the hook's answers through it are the hook's answers alone.

A hook that finds no warm process decides in its own process and starts one
(``proctor.gate._warm``); later hooks send their payload to it over a Unix socket in
``$PROCTOR_HOME/run`` and print its answer. On every payload fixture, on payloads that
are not hook payloads, and on every call of a session whose log grows, the bytes on
stdout and stderr and the exit status are those of the hook deciding alone
(``PROCTOR_GATE_DAEMON=0``); the session's kept state goes on from one path to the
other. Also: one process per key, a killed one's socket replaced, idle exit, another
key (code, environment) never asked, a folder others could write never trusted. On
PostgreSQL the fixtures are one payload read from the stored session (``helpers.on_backend``:
the warm process decides with the hook's own ``_alone._decide``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor._util.paths import proctor_home
from proctor.gate import _warm
from tests.backends import ON_POSTGRES, database_env
from tests.gate.helpers import (
    FIXTURES,
    SESSION_ID,
    append_session,
    ingest_session,
    on_backend,
    payload,
    write_session,
)

pytestmark = pytest.mark.slow  # Python processes per decision, and the warm process

PAYLOADS = [
    "pre_tool_use_read.json",
    "pre_tool_use_bash_rm.json",
    "pre_tool_use_write.json",
    "pre_tool_use_mcp_refund.json",
    "pre_tool_use_webfetch_injected.json",
    "post_tool_use.json",
]
LEAN_HOOK = [sys.executable, "-X", "importtime", "-m", "proctor.gate"]
CLI_HOOK = [sys.executable, "-m", "proctor.cli.main", "gate"]
IDLE = "60"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def warm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The warm process allowed (as for users); every one this test started is stopped."""
    monkeypatch.delenv(_warm.DAEMON_VARIABLE, raising=False)
    monkeypatch.setenv(_warm.IDLE_VARIABLE, IDLE)
    yield
    for pid in _daemons():
        os.kill(pid, signal.SIGKILL)


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **database_env(proctor_home(), create=False), **extra}


def _hook(data: bytes, command: list[str], **extra: str) -> tuple[bytes, bytes, int]:
    done = subprocess.run(
        command, input=data, capture_output=True, timeout=120, check=False, env=_env(**extra)
    )
    return done.stdout, done.stderr, done.returncode


def _without_importtime(stderr: bytes) -> bytes:
    return b"".join(
        line for line in stderr.splitlines(keepends=True) if not line.startswith(b"import time:")
    )


def _imported(stderr: bytes) -> set[bytes]:
    return {line.split(b"|")[-1].strip() for line in stderr.splitlines() if b"|" in line}


def _base(**extra: str) -> str:
    """The socket's base path a hook with this environment uses."""
    done = subprocess.run(
        [sys.executable, "-c", "from proctor.gate import _warm; print(_warm.base_path())"],
        capture_output=True, check=True, env=_env(**extra), text=True,
    )  # fmt: skip
    return done.stdout.strip()


def _pid(base: str) -> int | None:
    """The process listening at ``base`` (its credentials on a connection), or None."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5)
        try:
            with _warm._short(base + ".sock") as address:
                connection.connect(address)
        except OSError:
            return None
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        return int.from_bytes(credentials[:4], sys.byteorder)


def _wait_for(base: str, *, other_than: int | None = None, seconds: float = 60) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pid = _pid(base)
        if pid is not None and pid != other_than:
            return pid
        time.sleep(0.1)
    raise AssertionError(f"no warm gate process at {base}")


def _daemons() -> list[int]:
    """Warm gate processes of this test's home (from their command lines)."""
    home = str(proctor_home())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"proctor.gate._daemon" in argv and any(home.encode() in part for part in argv):
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def _gone(pid: int, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _session(tmp_path: Path, project: Path) -> Path:
    transcript = write_session(tmp_path / "logs", "session.jsonl", project=project)
    ingest_session(transcript)
    append_session(transcript, "session_tail.jsonl", project=project)
    return transcript


def test_every_fixture_is_answered_as_alone_through_the_warm_process(
    warm: None, project: Path, tmp_path: Path
) -> None:
    transcript = _session(tmp_path, project)
    datas = [
        json.dumps(payload(name, project=project, transcript_path=str(transcript))).encode()
        for name in on_backend(PAYLOADS)
    ]
    answered = len(datas)
    if not ON_POSTGRES:  # refused before any store is opened (helpers.on_backend)
        datas += [b"not json", b'{"session_id": 3}', json.dumps({"x": "\u00e9" * 10}).encode()]
        datas.append(
            json.dumps(
                payload("pre_tool_use_bash_rm.json", project=project, tool_input=None)
            ).encode()
        )
    alone = [_hook(data, CLI_HOOK, PROCTOR_GATE_DAEMON="0") for data in datas]
    assert not list((proctor_home() / "run").glob("*.sock"))  # turned off: none started
    assert [answer[2] for answer in alone[:answered]] == [0] * answered
    assert [answer[2] for answer in alone[answered:]] == [1] * (len(datas) - answered)
    denied = next(
        n for n, answer in enumerate(alone) if b'"permissionDecision":"deny"' in answer[0]
    )
    base = _base()
    assert _pid(base) is None
    first = _hook(datas[0], CLI_HOOK)  # decides alone and starts the warm process
    assert first == alone[0]
    pid = _wait_for(base)
    for data, expected in zip(datas, alone, strict=True):
        lean_out, lean_err, lean_status = _hook(data, LEAN_HOOK)
        imported = _imported(lean_err)
        assert b"proctor.rules" not in imported, "the warm process decided"
        assert b"pydantic" not in imported and b"click" not in imported
        assert (lean_out, _without_importtime(lean_err), lean_status) == expected, data
        assert _hook(data, CLI_HOOK) == expected, data
    assert _daemons() == [pid]  # still the one process, which answered them all
    folder = proctor_home() / "run"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(base + ".sock").stat().st_mode) == 0o600
    # With --no-daemon (or the variable), the hook decides itself: the rules imported here.
    alone_lean = _hook(datas[denied], [*LEAN_HOOK, "--no-daemon"])
    assert b"proctor.rules" in _imported(alone_lean[1])
    assert alone_lean[0] == alone[denied][0]
    off = _hook(datas[denied], LEAN_HOOK, PROCTOR_GATE_DAEMON="off")
    assert b"proctor.rules" in _imported(off[1])


def _tool_uses(line: str) -> list[dict[str, Any]]:
    record = json.loads(line)
    content = (record.get("message") or {}).get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if block.get("type") == "tool_use"]


def _grown_session(
    tmp_path: Path, project: Path, name: str, *, alternate: bool = False, **extra: str
) -> list[bytes]:
    """Grow a copy of the fixture session line by line; the hook's answer to each call.

    ``alternate``: every other call is decided in the hook's own process (``--no-daemon``),
    which replaces the session's kept state file between two calls of the warm process.
    """
    lines = (
        write_session(tmp_path / "source", "session.jsonl", "session_tail.jsonl", project=project)
        .read_text()
        .splitlines(keepends=True)
    )
    log = tmp_path / name / f"{SESSION_ID}.jsonl"
    log.parent.mkdir()
    log.write_text("".join(lines[:2]))
    answers = []
    base = json.loads((FIXTURES / "pre_tool_use_read.json").read_text())
    for line in lines[2:]:
        with log.open("a") as handle:
            handle.write(line)
        for block in _tool_uses(line):
            body = {**base, "cwd": str(project), "transcript_path": str(log)}
            body.update(tool_name=block["name"], tool_input=block.get("input") or {},
                        tool_use_id=block["id"])  # fmt: skip
            alone = ["--no-daemon"] if alternate and len(answers) % 2 else []
            out, err, status = _hook(json.dumps(body).encode(), [*CLI_HOOK, *alone], **extra)
            answers.append(out + b"|" + err + b"|" + str(status).encode())
    return answers


def test_a_growing_session_is_followed_as_alone(warm: None, project: Path, tmp_path: Path) -> None:
    ingest_session(write_session(tmp_path / "stored", "session.jsonl", project=project))
    alone = _grown_session(tmp_path, project, "alone", PROCTOR_GATE_DAEMON="0")
    assert len(alone) >= 3
    assert any(b"permissionDecision" in answer or b"systemMessage" in answer for answer in alone)
    _hook(b"not json", CLI_HOOK)  # starts the warm process before the session's first call
    _wait_for(_base())
    through = _grown_session(tmp_path, project, "warm")
    assert through == alone
    # The warm process and hooks deciding alone taking turns on one session's state.
    assert _grown_session(tmp_path, project, "turns", alternate=True) == alone
    # Kept between calls, as alone (on PostgreSQL nothing is kept: the store is read each time).
    assert (proctor_home() / "cache" / "gate" / "sessions").is_dir() != ON_POSTGRES


def test_a_killed_process_leaves_a_socket_that_is_replaced(warm: None, project: Path) -> None:
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    expected = _hook(data, CLI_HOOK, PROCTOR_GATE_DAEMON="0")
    _hook(data, CLI_HOOK)
    base = _base()
    first = _wait_for(base)
    os.kill(first, signal.SIGKILL)
    assert _gone(first)
    assert Path(base + ".sock").exists()  # left behind; connecting is refused
    assert _pid(base) is None
    assert _hook(data, CLI_HOOK) == expected  # decided alone, and started another
    second = _wait_for(base, other_than=first)
    lean = _hook(data, LEAN_HOOK)
    assert b"proctor.rules" not in _imported(lean[1])
    assert lean[0] == expected[0]
    os.kill(second, signal.SIGTERM)  # stopped: it removes its socket
    assert _gone(second)
    assert not Path(base + ".sock").exists()


def test_it_exits_when_idle_and_removes_its_socket(warm: None, project: Path) -> None:
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    _hook(data, CLI_HOOK, PROCTOR_GATE_DAEMON_IDLE="1")
    base = _base(PROCTOR_GATE_DAEMON_IDLE="1")
    deadline = time.monotonic() + 60
    while not _daemons() and time.monotonic() < deadline:
        time.sleep(0.05)
    (pid,) = _daemons()
    assert _gone(pid, seconds=60)
    assert not Path(base + ".sock").exists()


def test_never_more_than_one_per_key(warm: None) -> None:
    base = _base()
    starts = [
        subprocess.Popen([sys.executable, "-m", "proctor.gate._daemon", base], env=_env())
        for _ in range(4)
    ]
    pid = _wait_for(base)
    ended = []
    for process in starts:
        if process.pid != pid:
            assert process.wait(timeout=120) == 0  # found the lock taken and left
            ended.append(process.pid)
    assert len(ended) == 3
    assert _daemons() == [pid]
    # A hook started now finds it and starts no other.
    assert not _warm.start(base)
    os.kill(pid, signal.SIGTERM)
    for process in starts:
        process.wait(timeout=60)


def test_another_key_is_never_asked_and_a_stale_process_leaves(warm: None, project: Path) -> None:
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    _hook(data, CLI_HOOK)
    base = _base()
    pid = _wait_for(base)
    # Another environment steering Proctor is another key: another socket, another process.
    other = _base(PROCTOR_GATE_TEST_OTHER="1")
    assert other != base
    _hook(data, CLI_HOOK, PROCTOR_GATE_TEST_OTHER="1")
    other_pid = _wait_for(other)
    assert other_pid != pid
    # A hook whose key differs (code changed since it started) is not answered, and the
    # stale process exits.
    request = b"\0".join((_warm.PROTOCOL, b"0" * 64, os.fsencode(os.getcwd()), data))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        with _warm._short(base + ".sock") as address:
            connection.connect(address)
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        assert connection.recv(100) == b""
    assert _gone(pid)
    assert not Path(base + ".sock").exists()
    assert _alive(other_pid)


def _asks(data: bytes) -> bool:
    """Whether a hook process of this test's environment gets the warm process's answer."""
    code = "import sys\nfrom proctor.gate import _warm\nprint(_warm.ask(sys.stdin.buffer.read()))"
    done = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, check=True, env=_env()
    )
    return done.stdout.strip() != b"None"


def test_a_folder_others_could_write_is_not_trusted(warm: None, project: Path) -> None:
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    _hook(data, CLI_HOOK)
    base = _base()
    pid = _wait_for(base)
    assert _asks(data)
    folder = proctor_home() / "run"
    folder.chmod(0o770)
    assert not _asks(data)  # the hook decides alone
    assert not _warm.start(base)  # and starts none there
    folder.chmod(0o700)
    assert _asks(data)
    assert _daemons() == [pid]


def test_answers_are_read_only_in_their_own_shape() -> None:
    good = _warm.answer_bytes(b'{"a": 1}\n', b"proctor gate: warning: x\n", 0)
    assert _warm.parse_answer(good) == (b'{"a": 1}\n', b"proctor gate: warning: x\n", 0)
    assert _warm.parse_answer(good[:-1]) is None  # cut short
    assert _warm.parse_answer(good + b"x") is None
    assert _warm.parse_answer(b"") is None
    assert _warm.parse_answer(_warm.answer_bytes(b"", b"", 2)) is None  # 2 would block
    assert _warm.parse_answer(b"HTTP/1.1 200 OK\r\n\r\n{}") is None


def test_a_home_whose_socket_path_is_too_long_for_unix_sockets_still_works(
    warm: None, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / ("h" * 60) / ("o" * 60)
    monkeypatch.setenv("PROCTOR_HOME", str(home))
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    expected = _hook(data, CLI_HOOK, PROCTOR_GATE_DAEMON="0")
    assert _hook(data, CLI_HOOK) == expected
    base = _base()
    assert len(base + ".sock") > 108  # past sockaddr_un: reached through the folder's descriptor
    _wait_for(base)
    lean = _hook(data, LEAN_HOOK)
    assert b"proctor.rules" not in _imported(lean[1])
    assert lean[0] == expected[0]


def test_after_a_failed_start_hooks_start_none_for_a_while(warm: None) -> None:
    base = _base()
    Path(base).parent.mkdir(mode=0o700, parents=True)
    Path(base + ".failed").touch()
    assert not _warm.start(base)
    old = time.time() - _warm.RETRY_AFTER_S - 1
    os.utime(base + ".failed", (old, old))
    assert _warm.start(base)
    _wait_for(base)
    assert not Path(base + ".failed").exists()  # listening: the mark is gone
