"""What one span did: a model call, a tool execution, an agent run, or plumbing.

Classification follows ``gen_ai.operation.name`` (``chat``, ``generate_content``,
``text_completion``, ``execute_tool``, ``invoke_agent``) and OpenInference's
``openinference.span.kind`` (``LLM``, ``TOOL``, ``AGENT``); spans of older
instrumentations that record messages without an operation name count as model calls.
A span failed when its status is ERROR or it carries ``error.type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from proctor.sources.otel._flattened import has_indexed
from proctor.sources.otel._legacy import CHOICE_EVENT, EVENT_ROLES
from proctor.sources.otel._operations import (
    AgentRun,
    Exchange,
    SpanNode,
    ToolExecution,
    conversation_key_of,
    read_exchange,
    text_value,
)
from proctor.sources.otel._otlp import SpanRecord
from proctor.sources.otel._turns import Turn, parse_arguments, response_text

INFERENCE_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
_GENAI_PREFIXES = ("gen_ai.", "llm.", "openinference.")


def _tool_execution(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    name = text_value(attributes.get("gen_ai.tool.name")) or text_value(attributes.get("tool.name"))
    if name is None:
        name = span.name.removeprefix("execute_tool").strip() or span.name or "tool"
    if "gen_ai.tool.call.arguments" in attributes:
        arguments = parse_arguments(attributes["gen_ai.tool.call.arguments"])
    elif "input.value" in attributes:
        arguments = parse_arguments(attributes["input.value"])
    else:
        # Some OpenInference instrumentations put the call's arguments in tool.parameters.
        arguments = parse_arguments(attributes.get("tool.parameters"))
    result: str | None = None
    for key in ("gen_ai.tool.call.result", "output.value"):
        if key in attributes:
            result = response_text(attributes[key])
            break
    call_id = next(
        (
            str(attributes[key])
            for key in ("gen_ai.tool.call.id", "tool_call.id", "tool.id")
            if attributes.get(key) not in (None, "")
        ),
        None,
    )
    return ToolExecution(
        name=name,
        call_id=call_id,
        arguments=arguments,
        result=result,
        tool_type=text_value(attributes.get("gen_ai.tool.type")),
    )


def _agent_run(span: SpanRecord) -> AgentRun:
    attributes = span.attributes
    name = text_value(attributes.get("gen_ai.agent.name")) or text_value(
        attributes.get("agent.name")
    )
    if name is None:
        name = span.name.removeprefix("invoke_agent").strip() or None
    return AgentRun(
        agent_id=text_value(attributes.get("gen_ai.agent.id")),
        agent_name=name,
        description=text_value(attributes.get("gen_ai.agent.description")),
    )


def _agent_exchange(span: SpanRecord) -> tuple[Exchange | None, list[str]]:
    """Messages an agent span recorded about its run, as a low-priority exchange."""
    attributes = span.attributes
    exchange, problems = read_exchange(attributes)
    if not exchange.has_content:
        # OpenInference agents record plain-text input and output values.
        inputs = _plain_value(attributes, "input")
        outputs = _plain_value(attributes, "output")
        exchange = Exchange(
            inputs=() if inputs is None else (Turn("user", inputs),),
            outputs=() if outputs is None else (Turn("assistant", outputs),),
        )
    if not exchange.has_content and exchange.usage is None:
        return None, problems
    return replace(exchange, agent_level=True), problems


def _plain_value(attributes: Mapping[str, Any], prefix: str) -> str | None:
    value = text_value(attributes.get(f"{prefix}.value"))
    mime_type = attributes.get(f"{prefix}.mime_type")
    if value is None or (mime_type is not None and mime_type != "text/plain"):
        return None
    if mime_type is None and value.lstrip()[:1] in ("{", "["):
        return None
    return value


def _error(span: SpanRecord) -> str | None:
    error_type = text_value(span.attributes.get("error.type"))
    if span.status != "error" and error_type is None:
        return None
    for event in span.events:
        if event.name == "exception":
            message = text_value(event.attributes.get("exception.message"))
            kind = text_value(event.attributes.get("exception.type"))
            if message or kind:
                return ": ".join(part for part in (kind, message) if part)
    return span.status_message or error_type or "failed"


def interpret_span(span: SpanRecord) -> SpanNode:
    """What one span did."""
    attributes = span.attributes
    operation = attributes.get("gen_ai.operation.name")
    kind = str(attributes.get("openinference.span.kind") or "").upper()
    exchange: Exchange | None = None
    tool: ToolExecution | None = None
    agent: AgentRun | None = None
    problems: list[str] = []
    if operation == "execute_tool" or kind == "TOOL":
        tool = _tool_execution(span)
    elif operation == "invoke_agent" or kind == "AGENT":
        agent = _agent_run(span)
        exchange, problems = _agent_exchange(span)
    elif operation in INFERENCE_OPERATIONS or kind == "LLM" or _records_messages(span):
        exchange, problems = read_exchange(attributes, span.events)
    service = span.resource.get("service.name")
    return SpanNode(
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        name=span.name,
        started_at=span.started_at,
        ended_at=span.ended_at,
        conversation_key=conversation_key_of(attributes),
        error=_error(span),
        service=service if isinstance(service, str) else None,
        genai=bool(exchange or tool or agent)
        or any(k.startswith(_GENAI_PREFIXES) for k in attributes),
        exchange=exchange,
        tool=tool,
        agent=agent,
        problems=tuple(problems),
    )


def _records_messages(span: SpanRecord) -> bool:
    """True for spans with message content but no operation name (older instrumentations)."""
    keys = span.attributes
    return (
        "gen_ai.input.messages" in keys
        or "gen_ai.prompt" in keys
        or has_indexed(keys, "gen_ai.prompt.")
        or any(e.name in EVENT_ROLES or e.name == CHOICE_EVENT for e in span.events)
    )
