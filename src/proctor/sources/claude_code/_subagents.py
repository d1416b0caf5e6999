"""Sub-agents (SPEC ING-6): link each child conversation to the call that spawned it.

A sub-agent is spawned by a ``Task`` (up to 2.1.3x) or ``Agent`` tool call in the parent
and written to its own file (or, before 1.0.x ended, inline in the parent file as
``isSidechain`` records). The child is linked to its spawning call, strongest evidence
first: ``toolUseResult.agentId``, ``agent_progress`` records, an ``agentId: …`` line in
the call's result, the prompt text, then the description or agent type from the
child's ``.meta.json`` when exactly one open call fits. The run record takes status,
tokens, tool uses and duration from the parent's view of the call, or from the
``<task-notification>`` a background agent sends when it finishes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from proctor.sources.claude_code._build import BuiltConversation
from proctor.sources.claude_code._content import unwrap_teammate_message
from proctor.sources.claude_code._model import Node
from proctor.sources.claude_code._values import as_int, as_str
from proctor.transcript import Message, SubagentRun, ToolCall

SPAWN_TOOLS = frozenset({"Task", "Agent"})
WARMUP_PROMPT = "Warmup"
_AGENT_ID_LINE = re.compile(r"agentId: ([\w-]+)")
_NOTIFICATION_FIELD = re.compile(r"<(task-id|status|result|usage)>([\s\S]*?)</\1>")
_USAGE_FIELD = re.compile(r"(total_tokens|tool_uses|duration_ms):\s*(\d+)")
_STOP_KINDS = {
    "completed": "completed",
    "failed": "error",
    "error": "error",
    "killed": "interrupted",
}


@dataclass(frozen=True, slots=True)
class Notification:
    """What a ``<task-notification>`` says about a finished background agent."""

    status: str | None
    result: str | None
    total_tokens: int | None
    tool_uses: int | None
    duration_ms: int | None


class SpawnIndex:
    """The parent's spawning calls and what it knows about each child."""

    def __init__(
        self,
        calls: Iterable[ToolCall],
        progress_links: Mapping[str, str],
        messages: Iterable[Message],
    ) -> None:
        self.calls = [call for call in calls if call.name in SPAWN_TOOLS]
        self.by_agent: dict[str, ToolCall] = {}
        for call in self.calls:
            agent_id = _agent_id_of(call, progress_links)
            if agent_id is not None:
                self.by_agent.setdefault(agent_id, call)
        self.notifications = _notifications(messages)
        self.claimed: set[str] = set()

    def link(self, agent_id: str, prompt: str | None, meta: Mapping[str, Any]) -> ToolCall | None:
        """The call that spawned agent ``agent_id``, or None when nothing fits."""
        call = self.by_agent.get(agent_id)
        if call is None:
            call = self._match_open_call(prompt, meta)
        if call is not None:
            self.claimed.add(call.source_id)
        return call

    def _match_open_call(self, prompt: str | None, meta: Mapping[str, Any]) -> ToolCall | None:
        # Calls whose agent id is known belong to another child, so they never match here.
        linked = {call.source_id for call in self.by_agent.values()}
        open_calls = [
            call
            for call in self.calls
            if call.source_id not in self.claimed and call.source_id not in linked
        ]
        tests = (
            ("prompt", _normalise(prompt) if prompt else None),
            ("description", as_str(meta.get("description"))),
            ("subagent_type", as_str(meta.get("agentType"))),
        )
        for argument, wanted in tests:
            if wanted is None:
                continue
            fits = [call for call in open_calls if _argument(call, argument) == wanted]
            if len(fits) == 1:
                return fits[0]
        return None


def subagent_run(
    spawn: ToolCall | None,
    child: BuiltConversation,
    meta: Mapping[str, Any],
    notification: Notification | None,
) -> SubagentRun:
    """How the child was started and how it ended, from both sides of the link."""
    arguments: Mapping[str, Any] = (
        spawn.arguments if spawn is not None and isinstance(spawn.arguments, dict) else {}
    )
    facts: Mapping[str, Any] = spawn.attributes if spawn is not None else {}
    replies = [m for m in child.messages if m.role == "assistant" and m.kind == "reply"]
    launched_async = facts.get("isAsync") is True or facts.get("status") == "async_launched"
    summary = notification.result if notification is not None else None
    if summary is None and spawn is not None and not launched_async:
        summary = spawn.result_text
    status = (notification.status if notification else None) or as_str(facts.get("status"))
    tokens = as_int(facts.get("totalTokens")) or (
        notification.total_tokens if notification else None
    )
    if tokens is None:
        # Claude Code's own totalTokens is the context of the final response (its input,
        # cache and output tokens), so the fallback reads that same number.
        last = next((m.usage for m in reversed(replies) if m.usage is not None), None)
        tokens = last.total_tokens if last is not None else 0
    tool_uses = as_int(facts.get("totalToolUseCount"))
    if tool_uses is None and notification is not None:
        tool_uses = notification.tool_uses
    duration = as_int(facts.get("totalDurationMs")) or (
        notification.duration_ms if notification else None
    )
    if duration is None and child.started_at and child.ended_at:
        duration = int((child.ended_at - child.started_at).total_seconds() * 1000)
    return SubagentRun(
        parent_tool_call_id=spawn.source_id if spawn is not None else None,
        agent_type=as_str(arguments.get("subagent_type"))
        or as_str(meta.get("agentType"))
        or as_str(facts.get("agentType")),
        description=as_str(arguments.get("description")) or as_str(meta.get("description")),
        status=status,
        summary=summary,
        rounds=len(replies),
        total_tokens=tokens,
        tool_uses=tool_uses if tool_uses is not None else len(child.tool_calls),
        rejected_tools=tuple(
            dict.fromkeys(c.name for c in child.tool_calls if c.status == "rejected")
        ),
        stop_kind=_stop_kind(spawn, status, replies),
        duration_ms=duration,
    )


def is_warmup(child: BuiltConversation) -> bool:
    """2.0.x cache warm-up agents: the first prompt is literally ``Warmup``."""
    return (child.first_user_text or "").strip() == WARMUP_PROMPT


def child_prompt(child: BuiltConversation) -> str | None:
    """The child's first prompt as the parent wrote it (teammate wrapper removed)."""
    if child.first_user_text is None:
        return None
    return unwrap_teammate_message(child.first_user_text)


def split_sidechains(nodes: list[Node]) -> tuple[list[Node], list[list[Node]]]:
    """Separate inline sub-agent records (≤1.0.x logs) from the parent conversation.

    Returns the parent's nodes and one node list per inline run. A run is kept apart
    only when no parent record descends from it: drifted logs set ``isSidechain`` on
    ordinary records, and a true sub-agent never leads back into its parent's thread.
    """
    if not any(node.sidechain for node in nodes):
        return nodes, []
    run_of: dict[str, int] = {}
    runs: list[list[Node]] = []
    by_agent: dict[str, int] = {}
    known = {node.key for node in nodes if node.key is not None}
    for node in nodes:
        if not node.sidechain or node.key is None:
            continue
        index: int | None = None
        if node.agent_id is not None:
            index = by_agent.get(node.agent_id)
        elif node.parent is not None and node.parent in run_of:
            index = run_of[node.parent]
        elif node.parent is not None and node.parent not in known and runs:
            index = len(runs) - 1  # a lost parent: most likely the run just before
        if index is None:
            index = len(runs)
            runs.append([])
            if node.agent_id is not None:
                by_agent[node.agent_id] = index
        runs[index].append(node)
        run_of[node.key] = index
    merged = {
        run_of[node.parent]
        for node in nodes
        if not node.sidechain and node.parent is not None and node.parent in run_of
    }
    separate = {id(node) for i, run in enumerate(runs) if i not in merged for node in run}
    main = [node for node in nodes if id(node) not in separate]
    return main, [run for i, run in enumerate(runs) if i not in merged]


def _agent_id_of(call: ToolCall, progress_links: Mapping[str, str]) -> str | None:
    agent_id = as_str(call.attributes.get("agentId"))
    if agent_id is None and call.call_id is not None:
        agent_id = progress_links.get(call.call_id)
    if agent_id is None and call.result_text:
        match = _AGENT_ID_LINE.search(call.result_text)
        agent_id = match.group(1) if match else None
    return agent_id


def _argument(call: ToolCall, name: str) -> str | None:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    value = as_str(arguments.get(name))
    if name == "prompt" and value is not None:
        return _normalise(value)
    return value


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _notifications(messages: Iterable[Message]) -> dict[str, Notification]:
    found: dict[str, Notification] = {}
    for message in messages:
        if message.role != "user" or "<task-notification>" not in message.text:
            continue
        fields = {name: value.strip() for name, value in _NOTIFICATION_FIELD.findall(message.text)}
        agent_id = fields.get("task-id")
        if not agent_id:
            continue
        usage = dict(_USAGE_FIELD.findall(fields.get("usage", "")))
        found[agent_id] = Notification(
            status=fields.get("status") or None,
            result=fields.get("result") or None,
            total_tokens=int(usage["total_tokens"]) if "total_tokens" in usage else None,
            tool_uses=int(usage["tool_uses"]) if "tool_uses" in usage else None,
            duration_ms=int(usage["duration_ms"]) if "duration_ms" in usage else None,
        )
    return found


def _stop_kind(spawn: ToolCall | None, status: str | None, replies: list[Message]) -> str | None:
    if spawn is not None and spawn.status in ("error", "interrupted", "rejected"):
        return "error" if spawn.status == "error" else "interrupted"
    if status is not None and status in _STOP_KINDS:
        return _STOP_KINDS[status]
    if spawn is not None and spawn.status == "ok" and status is None:
        return "completed"
    last_stop = replies[-1].attributes.get("stop_reason") if replies else None
    if last_stop == "end_turn":
        return "completed"
    return as_str(last_stop)
