"""The hook deciding alone (no server): the same answers with what it keeps as without.

``python -m proctor.gate`` and ``proctor gate`` keep the rules' compiled regular
expressions, the code of dataclass methods and the session's state under
``$PROCTOR_HOME/cache/gate``; a process that finds them decides exactly as one that
compiles and reads everything anew (on PostgreSQL asked one payload, read from the stored
session: ``helpers.on_backend``). With nothing stored yet the hook never imports the
store (SQLAlchemy), and ``python -m proctor.gate`` never imports ``click``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from proctor._util.paths import proctor_home
from tests.backends import ON_POSTGRES, database_env
from tests.gate.helpers import append_session, ingest_session, on_backend, payload, write_session

pytestmark = pytest.mark.slow  # one Python process per decision

FIXTURES = [
    "pre_tool_use_read.json",
    "pre_tool_use_bash_rm.json",
    "pre_tool_use_write.json",
    "pre_tool_use_mcp_refund.json",
    "pre_tool_use_webfetch_injected.json",
    "post_tool_use.json",
]
LEAN_HOOK = [sys.executable, "-X", "importtime", "-m", "proctor.gate"]
CLI_HOOK = [sys.executable, "-m", "proctor.cli.main", "gate"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


def _hook(data: bytes, command: list[str], **env: str) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, **database_env(proctor_home(), create=False), **env}
    return subprocess.run(command, input=data, capture_output=True, timeout=120, check=False,
                          env=environment)  # fmt: skip


def _imported(stderr: bytes) -> set[bytes]:
    return {line.split(b"|")[-1].strip() for line in stderr.splitlines() if b"|" in line}


def test_kept_patterns_change_no_answer_on_any_fixture(project: Path, tmp_path: Path) -> None:
    transcript = write_session(tmp_path / "logs", "session.jsonl", project=project)
    ingest_session(transcript)
    append_session(transcript, "session_tail.jsonl", project=project)
    cache = proctor_home() / "cache" / "gate"
    for name in on_backend(FIXTURES):
        data = json.dumps(payload(name, project=project, transcript_path=str(transcript)))
        shutil.rmtree(cache, ignore_errors=True)
        cold = _hook(data.encode(), CLI_HOOK, PYDANTIC_DISABLE_PLUGINS="")
        assert cold.returncode == 0, cold.stderr
        assert list(cache.glob("patterns-*.marshal")), "the first process keeps its patterns"
        assert list(cache.glob("dataclass-code-*.marshal")), "and its dataclass methods' code"
        for command in (CLI_HOOK, LEAN_HOOK):
            warm = _hook(data.encode(), command)
            assert warm.returncode == 0, warm.stderr
            assert warm.stdout == cold.stdout, name
    denied = _hook(
        json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode(), CLI_HOOK
    )
    assert b'"permissionDecision":"deny"' in denied.stdout


@pytest.mark.skipif(ON_POSTGRES, reason="nothing stored means no SQLite file")
def test_with_nothing_stored_the_lean_hook_imports_neither_the_store_nor_click(
    project: Path,
) -> None:
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    done = _hook(data, LEAN_HOOK)
    assert done.returncode == 0
    assert b'"permissionDecision":"deny"' in done.stdout
    imported = _imported(done.stderr)
    assert b"proctor.rules" in imported  # it did decide here
    for heavy in (b"sqlalchemy", b"proctor.store", b"click", b"fastapi"):
        assert heavy not in imported
    # Plugins turned off, pydantic's plugin loader (importlib.metadata, email) is not needed.
    assert b"pydantic.plugin._loader" not in imported and b"importlib.metadata" not in imported
    assert not (proctor_home() / "proctor.db").exists()  # and created no store


def test_a_cache_folder_that_cannot_be_written_changes_nothing(project: Path) -> None:
    data = json.dumps(payload("pre_tool_use_bash_rm.json", project=project)).encode()
    (proctor_home() / "cache").mkdir(parents=True, exist_ok=True)
    (proctor_home() / "cache" / "gate").write_text("a file where the folder would be")
    done = _hook(data, [sys.executable, "-m", "proctor.gate"])
    assert done.returncode == 0, done.stderr
    assert b'"permissionDecision":"deny"' in done.stdout
    assert done.stderr == b""
