"""The gate over HTTP (SUP-5): the same decisions as `proctor gate`, from the same fixtures."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from proctor._util import collector
from proctor.cli.main import cli
from tests.api.conftest import Api
from tests.gate.helpers import (
    CONVERSATION_ID,
    NoRootRemoval,
    RepeatsFailedCommand,
    ingest_session,
    payload,
    write_policy,
    write_session,
)

HOOK_URL = "/api/gate/claude-code"


@pytest.fixture(autouse=True)
def test_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor runs the gate tests' small rules instead of the built-ins."""
    monkeypatch.setattr(
        "proctor.rules.builtin.BUILTIN_RULES",
        (
            NoRootRemoval(),
            RepeatsFailedCommand(),
        ),
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def api(proctor_home: Path) -> Iterator[Api]:
    """The API over the store `proctor gate` reads (the one in PROCTOR_HOME)."""
    proctor_home.mkdir(parents=True, exist_ok=True)
    client = Api(proctor_home / "proctor.db")
    try:
        yield client
    finally:
        client.close()


def cli_gate(hook: dict[str, Any]) -> str:
    # Through the top-level group, as a user runs it (click caches a command's help option
    # from the first context it sees; a bare invocation would drop `-h` for the session).
    result = CliRunner().invoke(cli, ["gate"], input=json.dumps(hook), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def rm_root(project: Path) -> dict[str, Any]:
    return payload("pre_tool_use_bash_rm.json", project=project, transcript_path=None)


def test_a_deny_is_the_same_hook_output_proctor_gate_prints(api: Api, project: Path) -> None:
    hook = rm_root(project)
    response = api.post(HOOK_URL, json=hook)
    assert response.status_code == 200
    assert response.json() == json.loads(cli_gate(hook))
    assert response.json()["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "Proctor: Removes the root folder [test_no_root_removal]: "
        "rm -rf / deletes everything on the machine",
    }


def test_an_allowed_call_is_an_empty_object_where_proctor_gate_prints_nothing(
    api: Api, project: Path
) -> None:
    hook = payload("pre_tool_use_read.json", project=project, transcript_path=None)
    assert cli_gate(hook) == ""
    response = api.post(HOOK_URL, json=hook)
    assert (response.status_code, response.json()) == (200, {})


def test_a_warn_mode_rule_gives_the_same_system_message(api: Api, project: Path) -> None:
    write_policy(project, '[rules]\ntest_no_root_removal = "warn"\n')
    hook = rm_root(project)
    assert api.post(HOOK_URL, json=hook).json() == json.loads(cli_gate(hook))


def test_a_command_that_failed_in_the_stored_session_is_asked_about(
    api: Api, project: Path, tmp_path: Path
) -> None:
    transcript = write_session(tmp_path / "projects", "session.jsonl", project=project)
    ingest_session(transcript)
    transcript.unlink()  # the store alone remembers the failing run
    rerun = payload(
        "pre_tool_use_bash_rm.json",
        project=project,
        transcript_path=str(transcript),
        tool_input={"command": "pytest -q tests/test_cart.py"},
    )
    answer = api.post(HOOK_URL, json=rerun).json()
    assert answer == json.loads(cli_gate(rerun))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_the_kept_supervisor_sees_events_that_arrive_between_requests(
    api: Api, project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "projects" / "later.jsonl"
    rerun = payload(
        "pre_tool_use_bash_rm.json",
        project=project,
        transcript_path=str(transcript),
        tool_input={"command": "pytest -q tests/test_cart.py"},
    )
    assert api.post(HOOK_URL, json=rerun).json() == {}, "no history yet"
    written = write_session(tmp_path / "projects", "session.jsonl", project=project)
    written.rename(transcript)
    answer = api.post(HOOK_URL, json=rerun).json()
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_the_format_neutral_gate_answers_deny_with_rule_and_reason(api: Api, project: Path) -> None:
    asked = {
        "conversation_id": CONVERSATION_ID,
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"},
        "cwd": str(project),
    }
    answer = api.post("/api/gate", json=asked).json()
    assert answer["decision"] == "deny"
    assert answer["rule"] == "test_no_root_removal"
    assert "rm -rf / deletes everything" in answer["reason"]
    assert [f["rule"] for f in answer["findings"]] == ["test_no_root_removal"]


def test_the_format_neutral_gate_allows_a_harmless_call(api: Api, project: Path) -> None:
    asked = {
        "conversation_id": "agent:1",
        "tool_name": "Read",
        "tool_input": {"file_path": "README.md"},
        "cwd": str(project),
    }
    answer = api.post("/api/gate", json=asked).json()
    assert answer == {"decision": "allow", "rule": None, "reason": "", "findings": []}


def test_an_unreadable_policy_asks_the_user_and_names_the_problem(api: Api, project: Path) -> None:
    write_policy(project, "[rules\n")
    answer = api.post(HOOK_URL, json=rm_root(project)).json()["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    assert "the policy could not be read" in answer["permissionDecisionReason"]


def test_bad_payloads_are_refused_with_4xx_and_other_hook_events_ignored(
    api: Api, project: Path
) -> None:
    unknown_field = {"conversation_id": "a", "tool_name": "Bash", "surprise": 1}
    assert api.post("/api/gate", json=unknown_field).status_code == 422
    no_input = rm_root(project) | {"tool_input": None}
    refused = api.post(HOOK_URL, json={k: v for k, v in no_input.items() if v is not None})
    assert refused.status_code == 400
    assert "no tool_input" in refused.json()["detail"]
    post_tool = payload("post_tool_use.json", project=project, transcript_path=None)
    assert api.post(HOOK_URL, json=post_tool).json() == {}


def test_proctor_serve_freezes_what_a_whole_read_leaves_and_nothing_else(
    api: Api, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `proctor serve` marks its process long-lived; an app made in a process that makes
    # many (these tests) freezes nothing, or every app alive then would never be collected.
    monkeypatch.setattr(collector, "_long_lived", False)
    freezes: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: freezes.append(1))
    transcript = write_session(tmp_path / "projects", "session.jsonl", project=project)
    hook = payload("pre_tool_use_read.json", project=project, transcript_path=str(transcript))
    api.post(HOOK_URL, json=hook).raise_for_status()
    assert not freezes, "frozen in a process not marked long-lived"
    api.app.state.live_gate = None  # the next request reads the session whole again
    monkeypatch.setattr(collector, "_long_lived", True)  # as `proctor serve` marks its process
    api.post(HOOK_URL, json=hook).raise_for_status()
    assert len(freezes) == 1
    with transcript.open("a") as log:
        log.write(transcript.read_text().splitlines(keepends=True)[-1])
    api.post(HOOK_URL, json=hook).raise_for_status()  # the quick path: nothing read whole
    assert len(freezes) == 1
    # Without a log the stored conversation is read whole on every request: no freeze.
    api.post(HOOK_URL, json=rm_root(project)).raise_for_status()
    api.post(HOOK_URL, json=rm_root(project)).raise_for_status()
    assert len(freezes) == 1
