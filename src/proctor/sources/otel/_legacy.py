"""Deprecated GenAI message shapes: message events and the ``gen_ai.prompt`` JSON.

Before message content moved to ``gen_ai.input.messages`` / ``gen_ai.output.messages``,
instrumentations wrote one event per message (``gen_ai.system.message``,
``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``,
``gen_ai.choice``), as log records with the message in the body or as span events with
it in attributes, and earlier still a ``gen_ai.prompt`` / ``gen_ai.completion`` JSON list
(on the span or on ``gen_ai.content.prompt`` / ``.completion`` span events). All of these
carry OpenAI-style messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.sources.otel._otlp import SpanEvent
from proctor.sources.otel._turns import Turn, parse_json_value, turn_from_chat
from proctor.transcript import Role

EVENT_ROLES: dict[str, Role] = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"


def turn_from_event(name: str, body: Any) -> tuple[Turn | None, bool] | None:
    """The turn a deprecated GenAI event carries and whether it is the model's output.

    None when the event is not a message event.
    """
    if name in EVENT_ROLES:
        message = dict(body) if isinstance(body, dict) else {"content": body}
        if not message.get("role"):
            message["role"] = EVENT_ROLES[name]
        return turn_from_chat(message, EVENT_ROLES[name]), False
    if name == CHOICE_EVENT:
        fields = body if isinstance(body, dict) else {}
        inner = fields.get("message")
        message = dict(inner) if isinstance(inner, dict) else {"content": fields.get("content")}
        message.setdefault("role", "assistant")
        if "tool_calls" not in message and "tool_calls" in fields:
            message["tool_calls"] = fields["tool_calls"]
        message.setdefault("finish_reason", fields.get("finish_reason"))
        return turn_from_chat(message, "assistant"), True
    return None


def prompt_json(value: Any, default_role: Role) -> tuple[list[Turn], str | None]:
    """Turns from the legacy ``gen_ai.prompt`` / ``gen_ai.completion`` JSON list."""
    messages, problem = parse_json_value(value)
    if problem is not None:
        return [], problem
    if isinstance(messages, str):
        messages = [{"role": default_role, "content": messages}]
    if not isinstance(messages, list):
        return [], "expected a list of messages"
    turns = [turn_from_chat(m, default_role) for m in messages if isinstance(m, dict)]
    return [t for t in turns if t is not None], None


def event_turns(events: Sequence[SpanEvent]) -> tuple[list[Turn], list[Turn]]:
    """Inputs and outputs recorded as deprecated GenAI events on the span itself."""
    inputs: list[Turn] = []
    outputs: list[Turn] = []
    for event in events:
        if event.name == "gen_ai.content.prompt":
            inputs.extend(prompt_json(event.attributes.get("gen_ai.prompt"), "user")[0])
        elif event.name == "gen_ai.content.completion":
            outputs.extend(prompt_json(event.attributes.get("gen_ai.completion"), "assistant")[0])
        else:
            found = turn_from_event(event.name, event.attributes)
            if found is not None and found[0] is not None:
                (outputs if found[1] else inputs).append(found[0])
    return inputs, outputs
