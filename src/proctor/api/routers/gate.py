"""The pre-tool gate over HTTP (SUP-5): the same decision as `proctor gate`.

One ``GateService`` per app keeps a live rule supervisor per conversation. Each request
first brings that supervisor up to date with the conversation's history (the stored
conversation plus the request's transcript file, exactly what ``proctor gate`` reads;
events already seen are skipped), then asks it about the proposed call.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, ConfigDict, Field

from proctor.api._deps import StoreDep
from proctor.errors import ConfigError
from proctor.findings import Action, Severity
from proctor.gate import (
    PRE_TOOL_USE,
    ClaudeCodeHookInput,
    GateRequest,
    GateService,
    decide,
    gate_request,
    hook_output,
    load_history,
    policy_unusable,
)
from proctor.rules import GateDecision
from proctor.store import SqlStore

router = APIRouter(prefix="/gate", tags=["gate"])

_service_lock = threading.Lock()


class GateFinding(BaseModel):
    """Something a rule found about the proposed call."""

    rule: str
    """The rule's id."""
    title: str
    """One line."""
    severity: Severity
    """How much it matters."""
    action: Action
    """What the rule asks for."""


class GateAnswer(BaseModel):
    """May the call run: ``allow``, ``ask`` the user, or ``deny``, with the rule and reason."""

    decision: Literal["allow", "ask", "deny"]
    """The answer."""
    rule: str | None = None
    """The rule behind an ``ask`` or ``deny``."""
    reason: str = ""
    """Why, in a sentence the agent and the user can read."""
    findings: list[GateFinding] = Field(default_factory=list)
    """Everything the rules found about the call, whatever the decision."""


class HookSpecificOutput(BaseModel):
    """Claude Code's ``PreToolUse`` decision."""

    model_config = ConfigDict(populate_by_name=True)

    hook_event_name: Literal["PreToolUse"] = Field(alias="hookEventName")
    permission_decision: Literal["ask", "deny"] = Field(alias="permissionDecision")
    permission_decision_reason: str = Field(alias="permissionDecisionReason")


class ClaudeCodeHookOutput(BaseModel):
    """What ``proctor gate`` prints; ``{}`` where it prints nothing (no rule objects)."""

    model_config = ConfigDict(populate_by_name=True)

    hook_specific_output: HookSpecificOutput | None = Field(
        default=None, alias="hookSpecificOutput"
    )
    """Set for a deny or an ask."""
    system_message: str | None = Field(default=None, alias="systemMessage")
    """Set when the call may run but a rule noted something (warn mode)."""


def _service(request: Request) -> GateService:
    with _service_lock:
        service: GateService | None = getattr(request.app.state, "gate_service", None)
        if service is None:
            service = GateService()
            request.app.state.gate_service = service
        return service


def _decide(service: GateService, store: SqlStore, asked: GateRequest) -> GateDecision:
    history = load_history(asked, store)
    try:
        service.observe(asked.conversation_id, history.events, context=history.context)
    except ConfigError as exc:
        return policy_unusable(exc)  # as `proctor gate` answers: ask, saying what to fix
    return decide(asked, service=service)


async def _decision(request: Request, store: SqlStore, asked: GateRequest) -> GateDecision:
    service = _service(request)
    return await anyio.to_thread.run_sync(_decide, service, store, asked)


@router.post("", responses={422: {"description": "The request body is not a GateRequest."}})
async def gate(
    request: Request, store: StoreDep, asked: Annotated[GateRequest, Body()]
) -> GateAnswer:
    """Decide whether an agent's proposed tool call may run (format-neutral).

    The history is the stored conversation plus ``transcript_path`` when given; the policy
    is the one found from ``cwd`` and the project, as for ``proctor gate``.
    """
    decision = await _decision(request, store, asked)
    return GateAnswer(
        decision=decision.decision,
        rule=decision.rule,
        reason=decision.reason,
        findings=[
            GateFinding(rule=f.rule, title=f.title, severity=f.severity, action=f.action)
            for f in decision.findings
        ],
    )


@router.post(
    "/claude-code",
    response_model=ClaudeCodeHookOutput,
    response_model_exclude_none=True,
    responses={400: {"description": "Not a Claude Code hook payload (the agent goes on)."}},
)
async def claude_code_hook(
    request: Request, store: StoreDep, hook: Annotated[ClaudeCodeHookInput, Body()]
) -> dict[str, Any]:
    """Claude Code's ``PreToolUse`` hook payload in, the exact JSON ``proctor gate`` prints out.

    ``{}`` stands for "prints nothing": no rule objects and the agent's own permission
    rules apply. Other hook events are answered ``{}`` too.
    """
    if hook.hook_event_name != PRE_TOOL_USE:
        return {}
    decision = await _decision(request, store, gate_request(hook))
    return hook_output(decision) or {}
