"""The pre-tool gate over HTTP (SUP-5): the same decision as `proctor gate`.

One ``LiveGate`` per app keeps a live rule supervisor per conversation. The first request
about a conversation reads its history as ``proctor gate`` does (the stored conversation
plus the request's transcript file); later requests read only the lines the transcript
gained since (a replaced or rewound file is read again), so a decision costs what the
session grew by, not its size. Then the supervisor is asked about the proposed call.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Annotated, Literal

import anyio
import orjson
from fastapi import APIRouter, Body, Request, Response
from pydantic import ConfigDict, Field

from proctor._util.collector import freeze_what_lives
from proctor.api._base_models import WireModel
from proctor.findings import Action, Severity
from proctor.gate import ClaudeCodeHookInput, GateRequest

if TYPE_CHECKING:
    from proctor.gate import LiveGate
    from proctor.rules import GateDecision
    from proctor.store import SqlStore

router = APIRouter(prefix="/gate", tags=["gate"])

_service_lock = threading.Lock()


class GateFinding(WireModel):
    """Something a rule found about the proposed call."""

    rule: str
    """The rule's id."""
    title: str
    """One line."""
    severity: Severity
    """How much it matters."""
    action: Action
    """What the rule asks for."""


class GateAnswer(WireModel):
    """May the call run: ``allow``, ``ask`` the user, or ``deny``, with the rule and reason."""

    decision: Literal["allow", "ask", "deny"]
    """The answer."""
    rule: str | None = None
    """The rule behind an ``ask`` or ``deny``."""
    reason: str = ""
    """Why, in a sentence the agent and the user can read."""
    findings: list[GateFinding] = Field(default_factory=list)
    """Everything the rules found about the call, whatever the decision."""


class HookSpecificOutput(WireModel):
    """Claude Code's ``PreToolUse`` decision."""

    model_config = ConfigDict(populate_by_name=True)

    hook_event_name: Literal["PreToolUse"] = Field(alias="hookEventName")
    permission_decision: Literal["ask", "deny"] = Field(alias="permissionDecision")
    permission_decision_reason: str = Field(alias="permissionDecisionReason")


class ClaudeCodeHookOutput(WireModel):
    """What ``proctor gate`` prints; ``{}`` where it prints nothing (no rule objects)."""

    model_config = ConfigDict(populate_by_name=True)

    hook_specific_output: HookSpecificOutput | None = Field(
        default=None, alias="hookSpecificOutput"
    )
    """Set for a deny or an ask."""
    system_message: str | None = Field(default=None, alias="systemMessage")
    """Set when the call may run but a rule noted something (warn mode)."""


def _live_gate(request: Request) -> LiveGate:
    from proctor.gate import LiveGate

    with _service_lock:
        live: LiveGate | None = getattr(request.app.state, "live_gate", None)
        if live is None:
            live = LiveGate()
            request.app.state.live_gate = live
        return live


async def _decision(request: Request, asked: GateRequest) -> GateDecision:
    live = _live_gate(request)
    # A session already held costs its log's few new lines: answered here, with no hop to a
    # worker thread (two thread switches are most of a request on a busy machine).
    quick = live.try_decide(asked)
    if quick is not None:
        return quick
    return await anyio.to_thread.run_sync(_decide_with_store, live, request, asked)


def _decide_with_store(live: LiveGate, request: Request, asked: GateRequest) -> GateDecision:
    store: SqlStore = request.app.state.store_holder.get()  # as StoreDep, in this thread
    reads = live.counters.full_reads
    decision = live.decide(asked, store)
    if asked.transcript_path and live.counters.full_reads != reads:
        # What a whole read of a log leaves lives on: the modules the gate imported on first
        # use (rules, the adapter) and the session's history, which later requests only
        # extend (no cycles: freed by reference counting when the session goes). Frozen in
        # a server (``proctor serve`` marks its process long-lived; an app in a process that
        # makes many, as tests do, freezes nothing), full collections stop walking them: one
        # took about 30 ms of CPU in a server holding one 2.7 MB session, paid by whichever
        # request ran it. A request without a log reads the store whole every time and
        # freezes nothing.
        freeze_what_lives()
    return decision


@router.post("", responses={422: {"description": "The request body is not a GateRequest."}})
async def gate(request: Request, asked: Annotated[GateRequest, Body()]) -> GateAnswer:
    """Decide whether an agent's proposed tool call may run (format-neutral).

    The history is the stored conversation plus ``transcript_path`` when given; the policy
    is the one found from ``cwd`` and the project, as for ``proctor gate``.
    """
    decision = await _decision(request, asked)
    return GateAnswer(
        decision=decision.decision,
        rule=decision.rule,
        reason=decision.reason,
        findings=[
            GateFinding(rule=f.rule, title=f.title, severity=f.severity, action=f.action)
            for f in decision.findings
        ],
    )


def _hook_body() -> dict[str, object]:
    # The route reads its body itself; the document still shows what it takes.
    schema = ClaudeCodeHookInput.model_json_schema()
    schema.pop("$defs", None)  # only JsonValue, which is any JSON value
    text = orjson.dumps(schema).replace(b'{"$ref":"#/$defs/JsonValue"}', b"{}")
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": orjson.loads(text)}},
        }
    }


@router.post(
    "/claude-code",
    response_model=ClaudeCodeHookOutput,
    responses={400: {"description": "Not a Claude Code hook payload (the agent goes on)."}},
    openapi_extra=_hook_body(),
)
async def claude_code_hook(request: Request) -> Response:
    """Claude Code's ``PreToolUse`` hook payload in, the exact JSON ``proctor gate`` prints out.

    ``{}`` stands for "prints nothing": no rule objects and the agent's own permission
    rules apply. Other hook events are answered ``{}`` too. A payload that is not a hook
    payload is refused with 400 and the line ``proctor gate`` would print.

    Runs once per agent tool call, so it does only that: the body is parsed as the command
    hook parses stdin and the answer is written as it prints it (no request or response
    model validation on the way).
    """
    from proctor.gate import PRE_TOOL_USE, gate_request, hook_output, parse_hook_input

    hook = parse_hook_input(await request.body())  # SourceError: 400, as ProctorError
    if hook.hook_event_name != PRE_TOOL_USE:
        return Response(b"{}", media_type="application/json")
    decision = await _decision(request, gate_request(hook))
    output = hook_output(decision)
    return Response(
        b"{}" if output is None else orjson.dumps(output), media_type="application/json"
    )
