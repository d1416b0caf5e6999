"""Conversation bundles from span scopes.

Each scope becomes one conversation: its model calls give the messages (each once, see
``_history``), its tool requests, executions and results give tool calls, its agent
spans give tasks, and its failed spans give ``error`` task events. A sub-agent scope
becomes a child conversation with a ``SubagentRun`` when it recorded messages or tool
calls; a sub-agent run that recorded neither is kept on the parent instead, as a task
and an entry in the parent's ``subagents`` attribute, so no empty conversation is made.

Ids: ``otel:<conversation key>`` for a conversation and
``otel:<conversation key>:agent:<spanId>`` for a sub-agent's; messages
``<conversation id>:msg:<content digest>.<occurrence>``; tool calls
``<conversation id>:call:<call id>`` or ``otel:<traceId>:<spanId>``; tasks
``otel:<traceId>:<spanId>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from proctor.sources.otel._history import History, HistoryEntry
from proctor.sources.otel._operations import Exchange, SpanNode
from proctor.sources.otel._scopes import Scope, ScopeKey, ref_of
from proctor.sources.otel._tool_calls import ToolCallBook
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    MessageKind,
    SourceIssue,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
)

_KINDS: dict[str, MessageKind] = {
    "user": "prompt",
    "assistant": "reply",
    "system": "instructions",
    "developer": "instructions",
    "tool": "injected",
}
_TITLE_CHARS = 100


@dataclass(slots=True)
class _Draft:
    scope: Scope
    conversation_id: str
    messages: list[Message]
    tool_calls: list[ToolCall]
    book: ToolCallBook
    tasks: list[Task] = field(default_factory=list)
    task_events: list[TaskEvent] = field(default_factory=list)
    issues: list[SourceIssue] = field(default_factory=list)
    subagents: list[dict[str, Any]] = field(default_factory=list)
    subagent_run: SubagentRun | None = None
    parent_conversation_id: str | None = None

    @property
    def is_empty(self) -> bool:
        return not self.messages and not self.tool_calls


def conversation_id_for(scope: Scope) -> str:
    """``otel:<key>`` for a main conversation, ``otel:<key>:agent:<spanId>`` for a sub-agent."""
    key, agent = scope.key
    return f"otel:{key}" if agent is None else f"otel:{key}:agent:{agent[1]}"


def build_bundles(scopes: list[Scope], origin: str) -> list[ConversationBundle]:
    """Build the conversations of one file.

    Args:
        scopes: Scopes from ``assign_scopes``, parents first.
        origin: The file they were read from, recorded on bundles and issues.

    Returns:
        One bundle per scope, parents first; sub-agent runs that recorded no messages
        and no tool calls are folded into their parent instead.
    """
    drafts: dict[ScopeKey, _Draft] = {}
    kept: list[_Draft] = []
    for scope in scopes:
        draft = _draft(scope, origin)
        parent = drafts.get(scope.parent) if scope.parent is not None else None
        if parent is not None and scope.agent_span is not None:
            if draft.is_empty:
                parent.tasks += draft.tasks
                parent.task_events += draft.task_events
                parent.issues += draft.issues
                parent.subagents.append(_subagent_summary(scope.agent_span))
                # Sub-agents this run started become children of the parent instead.
                drafts[scope.key] = parent
                continue
            draft.parent_conversation_id = parent.conversation_id
            draft.subagent_run = _subagent_run(scope, scope.agent_span, draft, parent)
        drafts[scope.key] = draft
        kept.append(draft)
    return [_bundle(draft, origin) for draft in kept]


def _sorted_exchanges(scope: Scope) -> list[tuple[SpanNode, Exchange]]:
    found = [(n, n.exchange) for n in scope.nodes if n.exchange is not None]
    # Agent-level messages merge after every model call, and their aggregate usage
    # counts only when no model call recorded any.
    model_calls = any(not e.agent_level for _, e in found)
    ordered = sorted(
        found, key=lambda pair: (pair[1].agent_level, _time_key(pair[0]), pair[0].span_id)
    )
    return [
        (node, replace(exchange, usage=None) if exchange.agent_level and model_calls else exchange)
        for node, exchange in ordered
    ]


def _time_key(node: SpanNode) -> str:
    return "" if node.started_at is None else node.started_at.isoformat()


def _draft(scope: Scope, origin: str) -> _Draft:
    conversation_id = conversation_id_for(scope)
    book = ToolCallBook(conversation_id)
    history = History()
    exchanges = _sorted_exchanges(scope)
    # An agent span's own messages (its request and final answer) only stand in for
    # model calls that recorded none: they repeat those calls in other words.
    model_call_content = any(e.has_content and not e.agent_level for _, e in exchanges)
    for node, exchange in exchanges:
        if exchange.has_content and not (exchange.agent_level and model_call_content):
            history.add(node, exchange)
    messages = _messages(history.entries(), conversation_id, book)
    for node in sorted(scope.nodes, key=_time_key):
        if node.tool is not None:
            book.execute(node, node.tool)
    draft = _Draft(scope, conversation_id, messages, book.tool_calls(), book)
    _add_tasks(draft)
    for node in scope.nodes:
        draft.issues += [
            SourceIssue(origin, f"span {node.span_id} ({node.name}): {problem}", severity="warning")
            for problem in node.problems
        ]
    return draft


def _messages(
    entries: list[HistoryEntry], conversation_id: str, book: ToolCallBook
) -> list[Message]:
    messages: list[Message] = []
    previous: str | None = None
    for entry in entries:
        turn = entry.turn
        source_id = f"{conversation_id}:msg:{entry.key}"
        if turn.text or turn.requests:
            attributes: dict[str, Any] = {"span_id": entry.node.span_id}
            for name, value in (
                ("finish_reason", turn.finish_reason),
                ("response_id", entry.response_id),
                ("original_role", turn.original_role),
            ):
                if value is not None:
                    attributes[name] = value
            messages.append(
                Message(
                    source_id=source_id,
                    role=turn.role,
                    kind=_KINDS[turn.role],
                    text=turn.text,
                    created_at=entry.created_at,
                    parent_source_id=previous,
                    author=turn.name,
                    model=entry.model if entry.is_output else None,
                    usage=entry.usage,
                    attributes=attributes,
                )
            )
            previous = source_id
            for index, request in enumerate(turn.requests):
                book.request(request, index, source_id, entry.created_at)
        for index, response in enumerate(turn.responses):
            book.respond(response, turn.name, entry.created_at, f"{source_id}:result:{index}")
    return messages


def _add_tasks(draft: _Draft) -> None:
    """Agent spans become tasks; failed spans become ``error`` events."""
    for node in sorted(draft.scope.nodes, key=_time_key):
        task_id = f"otel:{node.trace_id}:{node.span_id}"
        if node.agent is not None:
            status = "failed" if node.error else ("completed" if node.ended_at else "open")
            draft.tasks.append(
                Task(
                    task_id=task_id,
                    title=node.agent.agent_name or node.name or "agent run",
                    goal=node.agent.description,
                    status=status,
                    created_at=node.started_at,
                    completed_at=node.ended_at,
                    attributes=_compact({"agent_id": node.agent.agent_id, "span_id": node.span_id}),
                )
            )
            draft.task_events.append(
                TaskEvent(
                    f"{task_id}:started",
                    "started",
                    task_id=task_id,
                    status="open",
                    created_at=node.started_at,
                )
            )
            if node.ended_at is not None and node.error is None:
                draft.task_events.append(
                    TaskEvent(
                        f"{task_id}:completed",
                        "completed",
                        task_id=task_id,
                        status="completed",
                        created_at=node.ended_at,
                    )
                )
        if node.error is not None:
            task = draft.scope.task_span.get(ref_of(node))
            draft.task_events.append(
                TaskEvent(
                    f"{task_id}:error",
                    "error",
                    text=f"{node.name or 'span'} failed: {node.error}",
                    task_id=None if task is None else f"otel:{task[0]}:{task[1]}",
                    status="failed",
                    created_at=node.ended_at or node.started_at,
                    attributes=_compact(
                        {
                            "span_id": node.span_id,
                            "span_name": node.name,
                            "tool_call_id": draft.book.by_span.get(ref_of(node)),
                        }
                    ),
                )
            )


def _compact(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None and value != ""}


def _duration_ms(node: SpanNode) -> int | None:
    if node.started_at is None or node.ended_at is None:
        return None
    return int((node.ended_at - node.started_at).total_seconds() * 1000)


def _stop_kind(node: SpanNode) -> str | None:
    if node.error is not None:
        return "error"
    return "completed" if node.ended_at is not None else None


def _subagent_summary(agent_span: SpanNode) -> dict[str, Any]:
    agent = agent_span.agent
    return _compact(
        {
            "agent_name": None if agent is None else agent.agent_name,
            "agent_id": None if agent is None else agent.agent_id,
            "span_id": agent_span.span_id,
            "status": _stop_kind(agent_span),
            "duration_ms": _duration_ms(agent_span),
        }
    )


def _usage_total(scope: Scope) -> Usage:
    exchanges = [e for _, e in _sorted_exchanges(scope) if e.usage is not None]
    return sum((e.usage for e in exchanges if e.usage is not None), Usage())


def _subagent_run(scope: Scope, agent_span: SpanNode, draft: _Draft, parent: _Draft) -> SubagentRun:
    agent = agent_span.agent
    replies = [m for m in draft.messages if m.role == "assistant"]
    prompts = [m for m in draft.messages if m.role == "user" and m.text]
    spawning = scope.spawning_tool_span
    return SubagentRun(
        parent_tool_call_id=None if spawning is None else parent.book.by_span.get(ref_of(spawning)),
        agent_type=None if agent is None else agent.agent_name,
        description=(None if agent is None else agent.description)
        or (prompts[0].text if prompts else None),
        status=_stop_kind(agent_span) or "running",
        summary=next((m.text for m in reversed(replies) if m.text), None),
        rounds=len(replies),
        total_tokens=_usage_total(scope).total_tokens,
        tool_uses=len(draft.tool_calls),
        stop_kind=_stop_kind(agent_span),
        duration_ms=_duration_ms(agent_span),
    )


def _title(draft: _Draft) -> str | None:
    agent_span = draft.scope.agent_span
    if agent_span is not None and agent_span.agent is not None and agent_span.agent.agent_name:
        return agent_span.agent.agent_name
    prompt = next((m.text for m in draft.messages if m.role == "user" and m.text), None)
    if prompt is not None:
        line = prompt.strip().splitlines()[0] if prompt.strip() else prompt
        return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"
    agents = [n.agent.agent_name for n in draft.scope.nodes if n.agent and n.agent.agent_name]
    return agents[0] if agents else None


def _conversation_attributes(draft: _Draft) -> dict[str, Any]:
    nodes = sorted(draft.scope.nodes, key=_time_key)
    exchanges = [e for _, e in _sorted_exchanges(draft.scope) if not e.agent_level]
    usage = _usage_total(draft.scope)
    attributes: dict[str, Any] = {
        "trace_id": nodes[0].trace_id,
        "traces": len({n.trace_id for n in nodes}),
        "model_calls": len(exchanges),
    }
    provider = next((e.provider for e in exchanges if e.provider), None)
    if provider is not None:
        attributes["provider"] = provider
    if usage != Usage():
        attributes["usage"] = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
        }
    if draft.subagents:
        attributes["subagents"] = draft.subagents
    return attributes


def _bundle(draft: _Draft, origin: str) -> ConversationBundle:
    scope = draft.scope
    starts = [n.started_at for n in scope.nodes if n.started_at is not None]
    ends = [n.ended_at for n in scope.nodes if n.ended_at is not None]
    models = [m.model for m in draft.messages if m.model]
    if not models:
        models = [n.exchange.model for n in scope.nodes if n.exchange and n.exchange.model]
    service = next(
        (
            n.service
            for n in scope.nodes
            if n.service and not n.service.startswith("unknown_service")
        ),
        None,
    )
    agent_span = scope.agent_span
    conversation = Conversation(
        conversation_id=draft.conversation_id,
        format="otel",
        external_id=(
            scope.conversation_key
            if agent_span is None
            else f"{agent_span.trace_id}:{agent_span.span_id}"
        ),
        title=_title(draft),
        kind="main" if draft.subagent_run is None else "subagent",
        parent_conversation_id=draft.parent_conversation_id,
        project_hint=service,
        started_at=min(starts, default=None),
        ended_at=max(ends, default=None),
        model=models[-1] if models else None,
        attributes=_conversation_attributes(draft),
    )
    return ConversationBundle(
        conversation=conversation,
        messages=tuple(draft.messages),
        tool_calls=tuple(draft.tool_calls),
        tasks=tuple(draft.tasks),
        task_events=tuple(draft.task_events),
        subagent_run=draft.subagent_run,
        issues=tuple(draft.issues),
        origin=origin,
    )
