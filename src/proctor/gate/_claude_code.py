"""Claude Code's hook protocol: the ``PreToolUse`` payload in, the permission decision out.

Source: the Claude Code hooks reference, https://code.claude.com/docs/en/hooks (sections
"Common input fields", "PreToolUse input", "PreToolUse decision control", "Exit code
output"). A command hook gets one JSON object on stdin::

    {"session_id": "…", "transcript_path": "…/<session_id>.jsonl", "cwd": "…",
     "permission_mode": "default", "hook_event_name": "PreToolUse",
     "tool_name": "Bash", "tool_input": {"command": "npm test"}, "tool_use_id": "toolu_…"}

(inside a sub-agent also ``agent_id`` and ``agent_type``; newer versions add fields such
as ``effort``, which are accepted and ignored). It answers with exit code 0 and, to
decide, one JSON object on stdout::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                            "permissionDecision": "deny" | "ask",
                            "permissionDecisionReason": "…"}}

A ``deny`` reason is shown to Claude, an ``ask`` reason to the user in the permission
prompt. Proctor never answers ``allow``: that would skip Claude Code's own permission
prompt, i.e. approve the tool for the user (SPEC §12). When the rules find nothing the hook
prints nothing and Claude Code's permission rules apply unchanged; findings of rules in
``warn`` mode go to the user as a ``systemMessage``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from proctor.errors import SourceError
from proctor.gate._request import GateRequest

if TYPE_CHECKING:
    from proctor.rules import GateDecision

PRE_TOOL_USE = "PreToolUse"
TRANSCRIPT_FORMAT = "claude_code"
_STDIN = "<stdin>"
_JSON_KINDS = {
    list: "a JSON array",
    str: "a JSON string",
    int: "a JSON number",
    float: "a JSON number",
    bool: "a JSON boolean",
    type(None): "JSON null",
}


class ClaudeCodeHookInput(BaseModel):
    """What Claude Code writes to a command hook's stdin (fields Proctor reads)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    session_id: str = Field(min_length=1)
    """The session; its conversation is ``cc:session:<session_id>``."""
    hook_event_name: str = Field(min_length=1)
    """The event that fired (``PreToolUse``, ``PostToolUse``, ``Stop``, …)."""
    transcript_path: str | None = None
    """The session's JSONL log."""
    cwd: str | None = None
    """Claude Code's working folder when the hook runs."""
    permission_mode: str | None = None
    """``default``, ``plan``, ``acceptEdits``, ``auto``, ``dontAsk`` or ``bypassPermissions``."""
    tool_name: str | None = None
    """PreToolUse: the tool about to run."""
    tool_input: dict[str, JsonValue] | None = None
    """PreToolUse: its arguments."""
    tool_use_id: str | None = None
    """PreToolUse: the ``tool_use`` block's id."""
    agent_id: str | None = None
    """Set when the hook fires inside a sub-agent."""


def parse_hook_input(data: bytes) -> ClaudeCodeHookInput:
    """Read the hook payload; raise ``SourceError`` naming what is wrong with it."""
    if not data.strip():
        raise SourceError(_STDIN, "no hook payload on standard input (expected one JSON object)")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SourceError(_STDIN, f"the hook payload is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        raise SourceError(_STDIN, f"the hook payload is {kind}, not a JSON object")
    try:
        return ClaudeCodeHookInput.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
            for e in exc.errors()
        )
        raise SourceError(_STDIN, f"not a Claude Code hook payload: {problems}") from None


def gate_request(hook: ClaudeCodeHookInput, *, project: str | None = None) -> GateRequest:
    """The gate request of a ``PreToolUse`` payload."""
    if hook.hook_event_name != PRE_TOOL_USE:
        raise ValueError(f"not a {PRE_TOOL_USE} payload: {hook.hook_event_name}")
    tool_name, tool_input = hook.tool_name, hook.tool_input
    if tool_name is None or tool_input is None:
        missing = " or ".join(
            name
            for name, value in (("tool_name", tool_name), ("tool_input", tool_input))
            if value is None
        )
        raise SourceError(_STDIN, f"the {PRE_TOOL_USE} payload has no {missing}")
    conversation_id = f"cc:session:{hook.session_id}"
    transcript_path = hook.transcript_path
    if hook.agent_id:
        # A sub-agent's calls are judged against the sub-agent's own history.
        conversation_id = f"cc:agent:{hook.session_id}:{hook.agent_id}"
        transcript_path = _subagent_log(hook.transcript_path, hook.session_id, hook.agent_id)
    return GateRequest(
        conversation_id=conversation_id,
        tool_name=tool_name,
        tool_input=tool_input,
        call_id=hook.tool_use_id,
        call_source_id=f"cc:tool:{hook.tool_use_id}" if hook.tool_use_id else None,
        cwd=hook.cwd,
        project=project,
        transcript_path=transcript_path,
        transcript_format=TRANSCRIPT_FORMAT,
    )


def hook_output(decision: GateDecision) -> dict[str, Any] | None:
    """What to print on stdout for a decision; None means print nothing."""
    if decision.decision in ("deny", "ask"):
        return {
            "hookSpecificOutput": {
                "hookEventName": PRE_TOOL_USE,
                "permissionDecision": decision.decision,
                "permissionDecisionReason": f"Proctor: {decision.reason}",
            }
        }
    if decision.findings:
        noted = "; ".join(f"{f.title} [{f.rule}]" for f in decision.findings)
        return {"systemMessage": f"Proctor: {noted}"}
    return None


def _subagent_log(transcript_path: str | None, session_id: str, agent_id: str) -> str | None:
    # Claude Code keeps sub-agent logs beside the session's: <session>/subagents/agent-<id>.jsonl
    if not transcript_path:
        return None
    if Path(transcript_path).name.startswith("agent-"):
        return transcript_path  # already the sub-agent's own log
    log = Path(transcript_path).parent / session_id / "subagents" / f"agent-{agent_id}.jsonl"
    return str(log) if log.is_file() else None
