"""The ``gate`` command's answers, exactly, with small test rules in place of the built-ins.

Run in process (click's runner) so the rules can be chosen: the decision JSON is checked
byte for byte, and how a policy maps a rule to deny / ask / warn / off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from proctor.cli.gate import gate_command
from proctor.rules import Hit, Rule, RuleContext
from proctor.transcript import ToolCall
from tests.gate.helpers import (
    NoRootRemoval,
    RepeatsFailedCommand,
    ingest_session,
    payload,
    write_policy,
    write_session,
)


@pytest.fixture(autouse=True)
def test_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor runs the test rules instead of the built-ins."""
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


def gate(stdin: dict[str, Any] | str, *args: str) -> Result:
    data = stdin if isinstance(stdin, str) else json.dumps(stdin)
    return CliRunner().invoke(gate_command, list(args), input=data, catch_exceptions=False)


def rm_root(project: Path) -> dict[str, Any]:
    return payload("pre_tool_use_bash_rm.json", project=project, transcript_path=None)


def test_a_deny_is_the_exact_pre_tool_use_json_claude_code_reads(project: Path) -> None:
    result = gate(rm_root(project))
    assert result.exit_code == 0
    assert result.stdout == (
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
        '"permissionDecisionReason":"Proctor: Removes the root folder [test_no_root_removal]: '
        'rm -rf / deletes everything on the machine"}}\n'
    )
    assert result.stderr == ""


def test_a_policy_can_turn_a_deny_into_a_question_for_the_user(project: Path) -> None:
    write_policy(project, '[rules]\ntest_no_root_removal = "ask"\n')
    decision = json.loads(gate(rm_root(project)).stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "ask"
    assert decision["permissionDecisionReason"].startswith("Proctor: Removes the root folder")


def test_a_rule_in_warn_mode_lets_the_call_through_and_tells_the_user(project: Path) -> None:
    write_policy(project, '[rules]\ntest_no_root_removal = "warn"\n')
    result = gate(rm_root(project))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "systemMessage": "Proctor: Removes the root folder [test_no_root_removal]"
    }


def test_a_rule_turned_off_is_not_run(project: Path) -> None:
    write_policy(project, '[rules]\ntest_no_root_removal = "off"\n')
    result = gate(rm_root(project))
    assert (result.exit_code, result.stdout) == (0, "")


def test_nothing_is_printed_when_no_rule_objects(project: Path) -> None:
    result = gate(payload("pre_tool_use_read.json", project=project, transcript_path=None))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_a_command_that_failed_in_the_stored_session_is_asked_about(
    project: Path, tmp_path: Path
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
    decision = json.loads(gate(rerun).stdout)["hookSpecificOutput"]
    assert decision == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "Proctor: Repeats a command that failed [test_repeats_failed_command]",
    }
    fresh = {**rerun, "session_id": "6a4f0c2e-1b3d-4e5f-9a7b-8c9d0e1f2a3b"}
    assert gate(fresh).stdout == "", "another session has no such history"


def test_the_policy_option_wins_over_the_project_policy(project: Path, tmp_path: Path) -> None:
    write_policy(project, '[rules]\ntest_no_root_removal = "off"\n')
    explicit = tmp_path / "strict.toml"
    explicit.write_text('[rules]\ntest_no_root_removal = "deny"\n')
    decision = json.loads(gate(rm_root(project), "--policy", str(explicit)).stdout)
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_missing_policy_file_given_by_option_asks_and_names_it(
    project: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.toml"
    decision = json.loads(gate(rm_root(project), "--policy", str(missing)).stdout)
    assert decision["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert (
        f"{missing}: cannot read the policy file"
        in (decision["hookSpecificOutput"]["permissionDecisionReason"])
    )


def test_an_unknown_format_is_a_non_blocking_error(project: Path) -> None:
    result = gate(rm_root(project), "--format", "codex")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("proctor gate: Invalid value for '--format': 'codex'")


class Broken(Rule):
    id = "test_broken"
    category = "risk"
    description = "Raises."

    def before_call(self, state: Any, call: ToolCall, context: RuleContext) -> list[Hit]:
        raise KeyError("oops")


def test_a_bug_in_a_rule_does_not_block_the_agent_and_is_reported(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("proctor.rules.builtin.BUILTIN_RULES", (Broken(),))
    result = gate(rm_root(project))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "proctor gate: internal error, the call was not checked: KeyError: 'oops'\n"
    )


def test_a_payload_that_is_not_an_object_is_named(project: Path) -> None:
    result = gate("[1, 2]")
    assert result.exit_code == 1
    assert result.stderr == (
        "proctor gate: <stdin>: the hook payload is a JSON array, not a JSON object\n"
    )


def test_an_empty_stdin_is_named() -> None:
    result = gate("")
    assert result.exit_code == 1
    assert result.stderr == (
        "proctor gate: <stdin>: no hook payload on standard input (expected one JSON object)\n"
    )
