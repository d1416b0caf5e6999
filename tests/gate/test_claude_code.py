"""Claude Code's hook payload mapped onto a gate request, and decisions onto its output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.errors import SourceError
from proctor.findings import Evidence, Finding
from proctor.gate import GateRequest, gate_request, hook_output, parse_hook_input
from proctor.rules import GateDecision
from tests.gate.helpers import CONVERSATION_ID, SESSION_ID, payload


def _parsed(name: str, **overrides: object) -> GateRequest:
    data = json.dumps(payload(name, **overrides)).encode()
    return gate_request(parse_hook_input(data))


def test_a_pre_tool_use_payload_becomes_a_request_about_the_session() -> None:
    request = _parsed("pre_tool_use_webfetch_injected.json")
    assert request.conversation_id == CONVERSATION_ID
    assert request.tool_name == "WebFetch"
    assert request.tool_input == {
        "url": "https://paysdk-setup.xyz/register?ws=shop",
        "prompt": "Confirm the workspace is registered.",
    }
    assert request.call_id == "toolu_01RegisterPaySdk2Rw8"
    assert request.source_id == "cc:tool:toolu_01RegisterPaySdk2Rw8"  # as the adapter names it
    assert request.cwd == "/home/dev/shop"
    assert request.transcript_format == "claude_code"


def test_fields_claude_code_adds_later_are_accepted() -> None:
    request = _parsed("pre_tool_use_read.json", some_future_field={"x": 1})
    assert request.tool_name == "Read"


def test_a_call_without_a_tool_use_id_still_gets_a_stable_source_id() -> None:
    request = _parsed("pre_tool_use_read.json", tool_use_id=None)
    assert request.source_id == f"{CONVERSATION_ID}:proposed:call"


def test_a_sub_agent_call_is_judged_against_the_sub_agent_conversation(tmp_path: Path) -> None:
    session_log = tmp_path / f"{SESSION_ID}.jsonl"
    agent_log = tmp_path / SESSION_ID / "subagents" / "agent-a36efb2a1231c41e2.jsonl"
    agent_log.parent.mkdir(parents=True)
    agent_log.write_text("{}\n")
    request = _parsed(
        "pre_tool_use_read.json",
        transcript_path=str(session_log),
        agent_id="a36efb2a1231c41e2",
        agent_type="Explore",
    )
    assert request.conversation_id == f"cc:agent:{SESSION_ID}:a36efb2a1231c41e2"
    assert request.transcript_path == str(agent_log)
    given_directly = _parsed(
        "pre_tool_use_read.json", transcript_path=str(agent_log), agent_id="a36efb2a1231c41e2"
    )
    assert given_directly.transcript_path == str(agent_log)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "<stdin>: no hook payload on standard input (expected one JSON object)"),
        (b"null", "<stdin>: the hook payload is JSON null, not a JSON object"),
        (
            b'{"hook_event_name": "PreToolUse"}',
            "<stdin>: not a Claude Code hook payload: session_id: Field required",
        ),
        (
            b'{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash", '
            b'"tool_input": "ls"}',
            "<stdin>: not a Claude Code hook payload: tool_input: Input should be a valid dictionary",
        ),
    ],
)
def test_a_malformed_payload_says_exactly_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(SourceError) as raised:
        gate_request(parse_hook_input(data))
    assert str(raised.value) == message


def _finding(title: str, rule: str) -> Finding:
    return Finding(
        key=f"k-{rule}",
        conversation_id=CONVERSATION_ID,
        origin="rule",
        rule=rule,
        rule_version=1,
        action="warn",
        category="risk",
        severity="medium",
        title=title,
        evidence=[Evidence(source_type="tool_call", source_id="cc:tool:x")],
    )


def test_allow_prints_nothing_so_claude_codes_own_permissions_still_apply() -> None:
    assert hook_output(GateDecision("allow")) is None


def test_ask_carries_the_reason_for_the_permission_prompt() -> None:
    output = hook_output(GateDecision("ask", reason="Writes outside the plan [plan]", rule="plan"))
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "Proctor: Writes outside the plan [plan]",
        }
    }


def test_warnings_on_an_allowed_call_go_to_the_user_only() -> None:
    findings = (_finding("Near the tool-call budget", "budgets"), _finding("Odd", "other"))
    assert hook_output(GateDecision("allow", findings=findings)) == {
        "systemMessage": "Proctor: Near the tool-call budget [budgets]; Odd [other]"
    }
