"""The question the gate answers, in no particular agent's shape: "may this call run?".

Every agent hook (Claude Code's ``PreToolUse`` today) and the HTTP endpoint turn their own
payload into a ``GateRequest``; everything after that is shared.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from proctor.transcript import ToolCall


class GateRequest(BaseModel):
    """A tool call an agent is about to make, and where to find what happened before it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation_id: str = Field(min_length=1)
    """Proctor's id of the conversation (Claude Code: ``cc:session:<session_id>``)."""
    tool_name: str = Field(min_length=1)
    """The tool as the agent names it (``Bash``, ``Write``, ``mcp__github__create_issue``)."""
    tool_input: JsonValue = None
    """The call's arguments, usually a JSON object."""
    call_id: str | None = None
    """The agent's own id of the call (Claude Code's ``tool_use_id``)."""
    call_source_id: str | None = None
    """The source id the call gets once imported (``cc:tool:<tool_use_id>``); derived if unset."""
    cwd: str | None = None
    """The agent's working folder: where the project's ``.proctor/policy.toml`` is looked for."""
    project: str | None = None
    """Project whose policy applies; unset means the stored conversation's, else none."""
    transcript_path: str | None = None
    """The agent's own log of the conversation, read for events the store does not have yet."""
    transcript_format: str | None = None
    """Adapter that reads ``transcript_path`` (``claude_code``); detected from content if unset."""

    @property
    def source_id(self) -> str:
        """The stable source id of the proposed call."""
        if self.call_source_id:
            return self.call_source_id
        return f"{self.conversation_id}:proposed:{self.call_id or 'call'}"


def proposed_call(request: GateRequest, now: datetime | None = None) -> ToolCall:
    """The proposed call as the rules see it: pending, with no result yet."""
    return ToolCall(
        source_id=request.source_id,
        name=request.tool_name,
        arguments=request.tool_input,
        call_id=request.call_id,
        status="pending",
        created_at=now,
    )
