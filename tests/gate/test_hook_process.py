"""``proctor gate`` end to end, as Claude Code runs it: a process, a payload on stdin (SUP-5).

The store is a real SQLite file in this test's ``PROCTOR_HOME`` with the fixture session
imported; the project folder (the payload's ``cwd``) holds ``.proctor/policy.toml`` where a
test needs one. The rules are the real built-ins.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from proctor.rules.builtin import destructive, permissions
from tests.backends import ON_POSTGRES, stored_bytes
from tests.gate.helpers import (
    append_session,
    ingest_session,
    payload,
    run_hook,
    write_policy,
    write_session,
)

pytestmark = pytest.mark.slow  # one Python process per decision

INJECTION_RULE = " [injection_then_action]: "
"""How the reason names the rule (the rule's title before it is the rule's own wording)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The folder Claude Code runs in (the payload's ``cwd``)."""
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


@pytest.fixture
def transcript(tmp_path: Path, project: Path) -> Path:
    """The session's log where Claude Code keeps it, with the opening of the session."""
    logs = tmp_path / ".claude" / "projects" / "-tmp-shop"
    return write_session(logs, "session.jsonl", project=project)


def _decision(stdout: str) -> dict[str, str]:
    output = json.loads(stdout)
    assert set(output) == {"hookSpecificOutput"}
    assert stdout.count("\n") == 1, "stdout must hold the one JSON object only"
    decision: dict[str, str] = output["hookSpecificOutput"]
    assert set(decision) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert decision["hookEventName"] == "PreToolUse"
    return decision


def test_a_harmless_read_in_a_stored_session_passes_silently(
    project: Path, transcript: Path
) -> None:
    ingest_session(transcript)
    hook = run_hook(
        payload("pre_tool_use_read.json", project=project, transcript_path=str(transcript))
    )
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")


def test_a_call_obeying_instructions_appended_after_the_import_is_denied(
    project: Path, transcript: Path
) -> None:
    ingest_session(transcript)
    append_session(
        transcript, "session_tail.jsonl", project=project
    )  # the README arrived after the import
    hook = run_hook(
        payload(
            "pre_tool_use_webfetch_injected.json", project=project, transcript_path=str(transcript)
        )
    )
    assert hook.returncode == 0, hook.stderr
    decision = _decision(hook.stdout)
    assert decision["permissionDecision"] == "deny"
    reason = decision["permissionDecisionReason"]
    assert reason.startswith("Proctor: Tool call acts on instructions") and INJECTION_RULE in reason
    assert "paysdk-setup.xyz/register" in decision["permissionDecisionReason"]


def test_history_comes_from_the_transcript_alone_when_nothing_was_imported(
    project: Path, transcript: Path, proctor_home: Path
) -> None:
    append_session(transcript, "session_tail.jsonl", project=project)
    hook = run_hook(
        payload(
            "pre_tool_use_webfetch_injected.json", project=project, transcript_path=str(transcript)
        )
    )
    assert _decision(hook.stdout)["permissionDecision"] == "deny"
    assert not (proctor_home / "proctor.db").exists(), "the gate must not create a database"


def test_the_stored_history_alone_is_enough_when_the_transcript_is_gone(
    project: Path, transcript: Path
) -> None:
    append_session(transcript, "session_tail.jsonl", project=project)
    ingest_session(transcript)
    transcript.unlink()
    hook = run_hook(
        payload(
            "pre_tool_use_webfetch_injected.json", project=project, transcript_path=str(transcript)
        )
    )
    assert _decision(hook.stdout)["permissionDecision"] == "deny"


def test_the_same_call_passes_in_a_session_with_no_history_anywhere(project: Path) -> None:
    hook = run_hook(
        payload(
            "pre_tool_use_webfetch_injected.json",
            session_id="0b1e6c4a-93f2-4d57-a8e1-5c2f7d9b3e60",
            project=project,
            transcript_path=str(project / "missing.jsonl"),
        )
    )
    assert (hook.returncode, hook.stdout) == (0, "")


def _database_state(home: Path) -> dict[str, str]:
    if ON_POSTGRES:  # every row: a write would change one
        return {"proctor.db": hashlib.sha256(stored_bytes(home / "proctor.db")).hexdigest()}
    # The main file and its WAL: a write would land in one of them.
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(home.glob("proctor.db*"))
        if not path.name.endswith("-shm")
    }


def test_deciding_never_writes_the_store(
    project: Path, transcript: Path, proctor_home: Path
) -> None:
    ingest_session(transcript)
    before = _database_state(proctor_home)
    assert "proctor.db" in before
    append_session(transcript, "session_tail.jsonl", project=project)
    hook = run_hook(
        payload(
            "pre_tool_use_webfetch_injected.json",
            project=project,
            transcript_path=str(transcript),
        )
    )
    assert _decision(hook.stdout)["permissionDecision"] == "deny"
    assert _database_state(proctor_home) == before


def test_malformed_stdin_is_one_line_on_stderr_and_does_not_block() -> None:
    hook = run_hook(b'{"session_id": "abc", "hook_event_name": ')
    assert hook.returncode == 1  # Claude Code: non-blocking error (2 would block the call)
    assert hook.stdout == ""
    assert hook.stderr.count("\n") == 1
    assert hook.stderr.startswith("proctor gate: <stdin>: the hook payload is not valid JSON (")


def test_a_pre_tool_use_payload_without_the_tool_names_what_is_missing() -> None:
    hook = run_hook(payload("pre_tool_use_read.json", tool_input=None))
    assert (hook.returncode, hook.stdout) == (1, "")
    assert hook.stderr == "proctor gate: <stdin>: the PreToolUse payload has no tool_input\n"


def test_other_hook_events_pass_without_any_output(project: Path, transcript: Path) -> None:
    hook = run_hook(payload("post_tool_use.json", project=project, transcript_path=str(transcript)))
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")


def test_a_broken_policy_file_asks_the_user_and_names_the_problem(project: Path) -> None:
    policy = write_policy(project, 'mode = "sometimes"\n')
    hook = run_hook(payload("pre_tool_use_read.json", project=project))
    decision = _decision(hook.stdout)
    assert decision["permissionDecision"] == "ask"
    reason = decision["permissionDecisionReason"]
    assert reason.startswith("Proctor: the policy could not be read, so this call was not checked")
    assert f"{policy}: invalid policy: mode:" in reason


def test_a_hard_stop_in_the_project_policy_denies_even_in_an_unknown_session(
    project: Path,
) -> None:
    write_policy(
        project,
        """
[[hard_stops]]
name = "no-refunds"
tool = "mcp__stripe__create_refund"
argument = "charge"
pattern = "^ch_"
reason = "Refunds go through finance."
""",
    )
    hook = run_hook(payload("pre_tool_use_mcp_refund.json", project=project, transcript_path=None))
    decision = _decision(hook.stdout)
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("Proctor: ")
    assert "no-refunds" in decision["permissionDecisionReason"]
    assert "[hard_stop]" in decision["permissionDecisionReason"]


def test_a_write_in_a_read_only_project_is_denied_when_the_policy_says_deny(
    project: Path, transcript: Path
) -> None:
    ids = [rule.id for rule in permissions.RULES]
    assert ids, "the permissions rule family is still a stub"
    write_policy(project, 'mode = "ask"\n[rules]\n' + "".join(f'{i} = "deny"\n' for i in ids))
    ingest_session(transcript)
    hook = run_hook(
        payload("pre_tool_use_write.json", project=project, transcript_path=str(transcript))
    )
    decision = _decision(hook.stdout)
    assert decision["permissionDecision"] == "deny"
    assert any(f"[{i}]" in decision["permissionDecisionReason"] for i in ids)


def test_a_destructive_command_is_denied_when_the_policy_says_deny(project: Path) -> None:
    ids = [rule.id for rule in destructive.RULES]
    assert ids, "the destructive rule family is still a stub"
    write_policy(project, "[rules]\n" + "".join(f'{i} = "deny"\n' for i in ids))
    hook = run_hook(payload("pre_tool_use_bash_rm.json", project=project, transcript_path=None))
    decision = _decision(hook.stdout)
    assert decision["permissionDecision"] == "deny"
    assert any(f"[{i}]" in decision["permissionDecisionReason"] for i in ids)


def test_policy_option_overrides_the_project_policy(project: Path, tmp_path: Path) -> None:
    write_policy(project, 'mode = "sometimes"\n')  # would make the gate ask
    explicit = tmp_path / "policy.toml"
    explicit.write_text('[rules]\ninjection_then_action = "off"\n')
    hook = run_hook(payload("pre_tool_use_read.json", project=project), "--policy", str(explicit))
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
