"""What a model call, a tool run or an agent run looked like, whatever the convention.

``SpanNode`` is the one shape the grouping step reads: a span (or the log events of one
span) with what it did, as an ``Exchange`` (a model call: history sent, replies, model,
usage), a ``ToolExecution`` or an ``AgentRun``. This module also reads the attributes
those share across spans and events: message content (current GenAI
``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.system_instructions``,
OpenInference ``llm.*_messages``, legacy ``gen_ai.prompt.<i>.*`` and ``gen_ai.prompt``
JSON, deprecated events), model and provider names, and token usage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from proctor.sources.otel._flattened import has_indexed, legacy_genai_turns, openinference_turns
from proctor.sources.otel._legacy import event_turns, prompt_json
from proctor.sources.otel._otlp import SpanEvent
from proctor.sources.otel._turns import Turn, turn_from_instructions, turns_from_genai
from proctor.transcript import JSONValue, Usage


@dataclass(frozen=True, slots=True)
class Exchange:
    """One model call: the history sent, the messages that came back, and the usage."""

    inputs: tuple[Turn, ...]
    outputs: tuple[Turn, ...]
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None
    usage: Usage | None = None
    agent_level: bool = False
    """Messages an agent span recorded about its whole run, not one model call."""

    @property
    def has_content(self) -> bool:
        """True when the call recorded any message (content capture is opt-in)."""
        return bool(self.inputs or self.outputs)


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """A tool run by the application (an ``execute_tool`` or OpenInference TOOL span)."""

    name: str
    call_id: str | None
    arguments: JSONValue
    result: str | None
    tool_type: str | None = None


@dataclass(frozen=True, slots=True)
class AgentRun:
    """An agent invocation (``invoke_agent`` or OpenInference AGENT span)."""

    agent_id: str | None
    agent_name: str | None
    description: str | None

    def same_agent(self, other: AgentRun) -> bool:
        """True when both name the same agent (by id when both have one, else by name)."""
        if self.agent_id and other.agent_id:
            return self.agent_id == other.agent_id
        return self.agent_name == other.agent_name


@dataclass(frozen=True, slots=True)
class SpanNode:
    """One span (or the log events of one span) and what it did."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    started_at: datetime | None
    ended_at: datetime | None
    conversation_key: str | None
    error: str | None
    """Why the span failed (status message, ``error.type`` …); None when it did not."""
    service: str | None
    genai: bool
    """True when the span carries GenAI or OpenInference data."""
    exchange: Exchange | None = None
    tool: ToolExecution | None = None
    agent: AgentRun | None = None
    problems: tuple[str, ...] = ()


def text_value(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(attributes: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, bool) or value is None:
            continue
        try:
            return max(0, int(float(value)))
        except (TypeError, ValueError, OverflowError):
            continue
    return 0


def read_usage(attributes: Mapping[str, Any]) -> Usage | None:
    """Token usage of one model call, from GenAI or OpenInference attributes."""
    total_input = _count(
        attributes,
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
    )
    output = _count(
        attributes,
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    )
    cache_read = _count(
        attributes,
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
    )
    cache_write = _count(
        attributes,
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
    )
    reasoning = _count(
        attributes,
        "gen_ai.usage.reasoning.output_tokens",
        "llm.token_count.completion_details.reasoning",
    )
    if not any((total_input, output, cache_read, cache_write, reasoning)):
        return None
    # Both conventions count cache reads and writes inside the input total, while
    # ``Usage`` keeps them apart (its total adds them back), so subtract them here.
    return Usage(
        max(0, total_input - cache_read - cache_write), output, cache_read, cache_write, reasoning
    )


def call_metadata(attributes: Mapping[str, Any]) -> Exchange:
    """Model, provider, response id and usage of a model call, without its messages."""
    return Exchange(
        inputs=(),
        outputs=(),
        model=text_value(
            attributes.get("gen_ai.response.model")
            or attributes.get("llm.model_name")
            or attributes.get("gen_ai.request.model")
        ),
        provider=text_value(
            attributes.get("gen_ai.provider.name")
            or attributes.get("gen_ai.system")
            or attributes.get("llm.provider")
            or attributes.get("llm.system")
        ),
        response_id=text_value(attributes.get("gen_ai.response.id")),
        usage=read_usage(attributes),
    )


def _with_finish_reasons(outputs: list[Turn], attributes: Mapping[str, Any]) -> list[Turn]:
    """Replies given the span's finish reasons when their messages do not carry one."""
    reasons = attributes.get("gen_ai.response.finish_reasons", attributes.get("llm.finish_reason"))
    if isinstance(reasons, str):
        reasons = [reasons]
    if not isinstance(reasons, list):
        return outputs
    return [
        replace(turn, finish_reason=str(reason))
        if turn.finish_reason is None and reason is not None
        else turn
        for turn, reason in zip(outputs, reasons + [None] * len(outputs), strict=False)
    ]


def read_exchange(
    attributes: Mapping[str, Any], events: Sequence[SpanEvent] = ()
) -> tuple[Exchange, list[str]]:
    """The model call described by span (or event) attributes.

    Args:
        attributes: Decoded attributes of a span or a ``…operation.details`` event.
        events: The span's events, read when the attributes carry no messages
            (instrumentations that record deprecated message events on the span).

    Returns:
        The exchange, and a description of each attribute that could not be read.
    """
    problems: list[str] = []

    def checked(key: str, found: tuple[list[Turn], str | None]) -> list[Turn]:
        if found[1] is not None:
            problems.append(f'attribute "{key}": {found[1]}; messages skipped')
        return found[0]

    inputs: list[Turn] = []
    if "gen_ai.system_instructions" in attributes:
        system, problem = turn_from_instructions(attributes["gen_ai.system_instructions"])
        if problem is not None:
            problems.append(f'attribute "gen_ai.system_instructions": {problem}; skipped')
        elif system is not None:
            inputs.append(system)
    event_inputs, event_outputs = event_turns(events)
    if "gen_ai.input.messages" in attributes:
        inputs += checked(
            "gen_ai.input.messages", turns_from_genai(attributes["gen_ai.input.messages"])
        )
    elif has_indexed(attributes, "llm.input_messages."):
        inputs += openinference_turns(attributes, "llm.input_messages.", "user")
    elif has_indexed(attributes, "gen_ai.prompt."):
        inputs += legacy_genai_turns(attributes, "gen_ai.prompt.", "user")
    elif "gen_ai.prompt" in attributes:
        inputs += checked("gen_ai.prompt", prompt_json(attributes["gen_ai.prompt"], "user"))
    else:
        inputs += event_inputs
    if "gen_ai.output.messages" in attributes:
        found = turns_from_genai(attributes["gen_ai.output.messages"], "assistant")
        outputs = checked("gen_ai.output.messages", found)
    elif has_indexed(attributes, "llm.output_messages."):
        outputs = openinference_turns(attributes, "llm.output_messages.", "assistant")
    elif has_indexed(attributes, "gen_ai.completion."):
        outputs = legacy_genai_turns(attributes, "gen_ai.completion.", "assistant")
    elif "gen_ai.completion" in attributes:
        outputs = checked(
            "gen_ai.completion", prompt_json(attributes["gen_ai.completion"], "assistant")
        )
    else:
        outputs = event_outputs
    outputs = _with_finish_reasons(outputs, attributes)
    exchange = replace(call_metadata(attributes), inputs=tuple(inputs), outputs=tuple(outputs))
    return exchange, problems


def conversation_key_of(attributes: Mapping[str, Any]) -> str | None:
    """``gen_ai.conversation.id``, else OpenInference ``session.id``."""
    for key in ("gen_ai.conversation.id", "session.id"):
        value = attributes.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None
