"""Live supervision wired into ``proctor ingest`` and ``proctor watch`` (SPEC SUP-2)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.cli.watch import BackgroundSupervision
from proctor.ingest import ingest
from proctor.models import set_default_connection
from proctor.store import open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.conftest import EXAMPLES_DIR

SESSION = "62154fe7-682b-4c07-870b-f97d004574c6"
FOLDER = "claude-code/-home-dev-projects-invoice-service"
NOTHING: dict[str, Any] = {"decisions": []}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _append_reply(path: Path, text: str) -> None:
    last = json.loads(path.read_text().splitlines()[-1])
    reply = {key: last[key] for key in ("cwd", "sessionId", "version", "gitBranch") if key in last}
    reply |= {
        "parentUuid": last["uuid"],
        "isSidechain": False,
        "userType": "external",
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-02-17T10:00:00.000Z",
        "message": {
            "id": f"msg_{uuid.uuid4().hex}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    with path.open("a") as file:
        file.write(json.dumps(reply) + "\n")


def test_ingest_runs_the_analysis_a_new_reply_triggers_and_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(EXAMPLES_DIR / FOLDER, folder)
    assert run("ingest", str(folder)).exit_code == 0
    with ScriptedModelServer(responder=lambda _request: NOTHING) as server:
        store = open_store()
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        store.close()
        assert run("supervise", "enable", SESSION[:8], "--throttle", "0s").exit_code == 0
        _append_reply(folder / f"{SESSION}.jsonl", "The export is fixed.")
        result = run("ingest", str(folder), "--json")
        assert len(server.requests) == 1
    assert result.exit_code == 0, result.output
    [line] = json.loads(result.output)["supervision"]
    assert "(after_reply): 0 finding(s)" in line


def test_ingest_without_a_session_makes_no_model_request(tmp_path: Path) -> None:
    with ScriptedModelServer(responder=lambda _request: NOTHING) as server:
        store = open_store()
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        store.close()
        result = run("ingest", str(EXAMPLES_DIR), "--json")
        assert server.requests == []
    assert json.loads(result.output)["supervision"] == []


@pytest.mark.slow
def test_watch_supervises_on_its_own_thread_and_finishes_before_it_stops(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(EXAMPLES_DIR / FOLDER, folder)
    assert run("ingest", str(folder)).exit_code == 0
    with ScriptedModelServer(responder=lambda _request: NOTHING) as server:
        store = open_store()
        store.save_connection(server.connection("scripted"))
        set_default_connection(store, "scripted")
        assert run("supervise", "enable", SESSION[:8], "--throttle", "0s").exit_code == 0
        _append_reply(folder / f"{SESSION}.jsonl", "The export is fixed.")
        assert run("ingest", str(folder)).exit_code == 0  # analysis 1, from ingest
        with BackgroundSupervision(store) as supervision:
            _append_reply(folder / f"{SESSION}.jsonl", "Also cleaned up the lock file.")
            written = ingest(store, [folder])
            supervision.changed(written.conversation_ids)
        store.close()
        assert len(server.requests) == 2
        assert "cleaned up the lock file" in server.requests[-1].text_of("user")
