"""Messages flattened into indexed attribute keys.

Span attributes cannot hold lists of objects, so OpenInference writes
``llm.input_messages.<i>.message.role`` / ``.message.content`` /
``.message.contents.<j>.message_content.text`` /
``.message.tool_calls.<j>.tool_call.function.name`` …, and older GenAI instrumentations
(OpenLLMetry) write ``gen_ai.prompt.<i>.role`` / ``gen_ai.completion.<i>.content``.
This module regroups such keys by index (gaps in the numbering are normal and
tolerated) and reads them as ``Turn`` values. Some exporters keep the list instead of
flattening it; that form is flattened first, so both read the same.

OpenInference hidden reasoning is dropped here: ``message_content`` entries of type
``reasoning`` or carrying ``signature`` / ``data`` / ``encrypted_content``, and
``tool_call.reasoning_signature`` (which is simply never read).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from proctor.sources.otel._turns import (
    ToolRequest,
    ToolResponse,
    Turn,
    map_role,
    parse_arguments,
    turn_from_chat,
    url_placeholder,
)
from proctor.transcript import Role

_INDEXED = re.compile(r"^(\d+)\.(.+)$")
_HIDDEN_CONTENT_FIELDS = ("signature", "data", "encrypted_content")


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as dotted keys: ``{"a": [{"b": 1}]}`` → ``{"a.0.b": 1}``."""
    flat: dict[str, Any] = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            flat.update(flatten(inner, f"{prefix}{key}."))
    elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
        for index, inner in enumerate(value):
            flat.update(flatten(inner, f"{prefix}{index}."))
    elif prefix:
        flat[prefix[:-1]] = value
    return flat


def regroup(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Values under ``<prefix><i>.<rest>`` as one dict of ``rest`` keys per index, in order.

    A list value stored whole under ``prefix`` without its trailing dot is flattened
    first, so exporters that keep lists read the same as those that flatten them.
    """
    groups: dict[int, dict[str, Any]] = {}
    whole = attributes.get(prefix.rstrip("."))
    if isinstance(whole, list):
        for index, item in enumerate(whole):
            if isinstance(item, dict):
                groups[index] = flatten(item)
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        match = _INDEXED.match(key[len(prefix) :])
        if match is not None:
            groups.setdefault(int(match[1]), {})[match[2]] = value
    return [groups[index] for index in sorted(groups)]


def has_indexed(attributes: Mapping[str, Any], prefix: str) -> bool:
    """True when some key is ``<prefix><i>.…`` or the whole list is stored under it."""
    if isinstance(attributes.get(prefix.rstrip(".")), list):
        return True
    return any(key.startswith(prefix) for key in attributes)


def _content_text(content: Mapping[str, Any]) -> str | None:
    """Visible text of one ``message_content`` entry; None for hidden or empty entries."""
    if any(
        key.rsplit(".", 1)[-1] in _HIDDEN_CONTENT_FIELDS and value for key, value in content.items()
    ):
        return None
    kind = str(content.get("message_content.type") or "text").lower()
    if kind in ("reasoning", "thinking", "redacted_thinking"):
        return None
    if kind == "text":
        text = content.get("message_content.text")
        return text if isinstance(text, str) and text else None
    if kind in ("image", "audio", "video"):
        url = content.get(f"message_content.{kind}.{kind}.url")
        return url_placeholder(url, kind)
    return f"[{kind} part]"


def openinference_turn(group: Mapping[str, Any], default_role: Role) -> Turn | None:
    """One OpenInference message from its regrouped ``message.*`` keys."""
    role, original = map_role(group.get("message.role"), default_role)
    texts: list[str] = []
    content = group.get("message.content")
    if isinstance(content, str) and content:
        texts.append(content)
    for entry in regroup(group, "message.contents."):
        text = _content_text(entry)
        if text is not None:
            texts.append(text)
    requests = [
        ToolRequest(
            _str(call.get("tool_call.id")),
            str(call.get("tool_call.function.name") or "tool"),
            parse_arguments(call.get("tool_call.function.arguments")),
        )
        for call in regroup(group, "message.tool_calls.")
    ]
    legacy_name = group.get("message.function_call_name")
    if isinstance(legacy_name, str) and legacy_name:
        requests.append(
            ToolRequest(
                None,
                legacy_name,
                parse_arguments(group.get("message.function_call_arguments_json")),
            )
        )
    responses: list[ToolResponse] = []
    if role == "tool":
        responses.append(ToolResponse(_str(group.get("message.tool_call_id")), "\n\n".join(texts)))
        texts = []
    turn = Turn(
        role=role,
        text="\n\n".join(texts),
        requests=tuple(requests),
        responses=tuple(responses),
        name=_str(group.get("message.name")),
        original_role=original,
    )
    return None if turn.is_empty else turn


def openinference_turns(
    attributes: Mapping[str, Any], prefix: str, default_role: Role
) -> list[Turn]:
    """Turns under ``llm.input_messages.`` or ``llm.output_messages.``."""
    return [
        turn
        for group in regroup(attributes, prefix)
        if (turn := openinference_turn(group, default_role)) is not None
    ]


def legacy_genai_turns(
    attributes: Mapping[str, Any], prefix: str, default_role: Role
) -> list[Turn]:
    """Turns under the legacy ``gen_ai.prompt.`` / ``gen_ai.completion.`` indexed keys."""
    turns: list[Turn] = []
    for group in regroup(attributes, prefix):
        message: dict[str, Any] = {
            "role": group.get("role"),
            "content": group.get("content"),
            "name": group.get("name"),
            "tool_call_id": group.get("tool_call_id"),
            "finish_reason": group.get("finish_reason"),
            "tool_calls": [
                {
                    "id": call.get("id"),
                    "function": {"name": call.get("name"), "arguments": call.get("arguments")},
                }
                for call in regroup(group, "tool_calls.")
            ],
        }
        turn = turn_from_chat(message, default_role)
        if turn is not None:
            turns.append(turn)
    return turns


def _str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)
