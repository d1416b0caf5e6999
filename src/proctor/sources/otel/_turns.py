"""Chat messages as telemetry records them, in one neutral shape.

GenAI spans, deprecated GenAI events, legacy indexed attributes and OpenInference all
describe the same thing differently: a message with a role, visible text, tool calls it
requests and tool results it carries. Each reader turns its shape into ``Turn`` values;
everything after that is shared.

Hidden reasoning is dropped here, at parse time (SPEC ING-3): ``reasoning`` parts,
``thinking`` blocks and anything carrying a signature or encrypted content never become
text. Inline media become short placeholders (ING-5).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from proctor.transcript import JSONValue, Role, canonical_json

_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
_HIDDEN_PART_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking", "thought"})
_MODALITIES = ("image", "audio", "video")


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A tool call the model asked for."""

    call_id: str | None
    name: str
    arguments: JSONValue


@dataclass(frozen=True, slots=True)
class ToolResponse:
    """A tool result handed back to the model."""

    call_id: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One chat message: role, visible text, tool requests and tool results."""

    role: Role
    text: str
    requests: tuple[ToolRequest, ...] = ()
    responses: tuple[ToolResponse, ...] = ()
    name: str | None = None
    """The participant name the message carries (agent or tool name)."""
    finish_reason: str | None = None
    original_role: str | None = None
    """The role as written, when it was not one of Proctor's roles."""

    @property
    def is_empty(self) -> bool:
        """True when the message carries nothing visible."""
        return not self.text and not self.requests and not self.responses

    def content_key(self) -> str:
        """What the message says, hashed: equal for the same message repeated by a later span.

        Participant names and finish reasons are left out because instrumentations record
        them on the response but not when the same message is sent back as history.
        """
        payload = (
            self.role,
            self.text.strip(),
            [(r.call_id, r.name, r.arguments) for r in self.requests],
            [(r.call_id, r.text.strip()) for r in self.responses],
        )
        return hashlib.blake2b(canonical_json(payload).encode(), digest_size=12).hexdigest()


def map_role(value: Any, default: Role = "user") -> tuple[Role, str | None]:
    """Proctor's role for a role name, and the original name when it had to be mapped."""
    if not isinstance(value, str) or not value:
        return default, None
    role = _ROLES.get(value.lower())
    if role is None:
        return default, value
    return role, None if value == role else value


def parse_arguments(value: Any) -> JSONValue:
    """Tool arguments as JSON: strings holding JSON are parsed, other strings are kept."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def response_text(value: Any) -> str:
    """A tool response as text: strings as they are, anything else as canonical JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(value)


def parse_json_value(value: Any) -> tuple[Any, str | None]:
    """A structured value from an attribute that may hold it as a JSON string."""
    if not isinstance(value, str):
        return value, None
    try:
        return orjson.loads(value), None
    except orjson.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"


def media_placeholder(
    modality: Any, mime_type: Any, *, size: int | None = None, reference: str | None = None
) -> str:
    """``[image: image/png, 12345 bytes]``: what stands in for media content."""
    label = modality if modality in _MODALITIES else "file"
    if label == "file" and isinstance(mime_type, str):
        label = next((m for m in _MODALITIES if mime_type.startswith(f"{m}/")), "file")
    details = [mime_type] if isinstance(mime_type, str) and mime_type else []
    if size is not None:
        details.append(f"{size} bytes")
    elif reference:
        details.append(reference)
    return f"[{label}: {', '.join(details)}]" if details else f"[{label}]"


def base64_size(content: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    stripped = "".join(content.split()).rstrip("=")
    return len(stripped) * 3 // 4


def url_placeholder(url: Any, modality: str = "image") -> str:
    """A placeholder for a media URL; data URLs give their media type and size."""
    if not isinstance(url, str) or not url:
        return f"[{modality}]"
    if url.startswith("data:"):
        header, _, payload = url.partition(",")
        mime_type = header[5:].split(";", 1)[0] or None
        return media_placeholder(modality, mime_type, size=base64_size(payload))
    return media_placeholder(modality, None, reference=url)


def is_hidden(part: Mapping[str, Any]) -> bool:
    """True for reasoning parts and parts carrying signatures or encrypted content."""
    kind = str(part.get("type") or "").lower()
    if kind in _HIDDEN_PART_TYPES or "reasoning" in kind or "thinking" in kind:
        return True
    return any(key in part for key in ("signature", "encrypted_content"))


@dataclass(slots=True)
class _Collected:
    texts: list[str]
    requests: list[ToolRequest]
    responses: list[ToolResponse]


def _genai_part(part: Mapping[str, Any], into: _Collected) -> None:
    kind = part.get("type")
    if kind == "text":
        content = part.get("content")
        if isinstance(content, str):
            into.texts.append(content)
    elif kind in ("tool_call", "server_tool_call"):
        arguments = part.get("arguments") if kind == "tool_call" else part.get("server_tool_call")
        into.requests.append(
            ToolRequest(
                _str(part.get("id")), str(part.get("name") or "tool"), parse_arguments(arguments)
            )
        )
    elif kind in ("tool_call_response", "server_tool_call_response"):
        key = "response" if kind == "tool_call_response" else "server_tool_call_response"
        into.responses.append(ToolResponse(_str(part.get("id")), response_text(part.get(key))))
    elif kind == "blob":
        content = part.get("content")
        size = base64_size(content) if isinstance(content, str) else None
        into.texts.append(media_placeholder(part.get("modality"), part.get("mime_type"), size=size))
    elif kind == "file":
        reference = f"file {part.get('file_id')}" if part.get("file_id") else None
        into.texts.append(
            media_placeholder(part.get("modality"), part.get("mime_type"), reference=reference)
        )
    elif kind == "uri":
        uri = part.get("uri")
        if isinstance(uri, str) and uri.startswith("data:"):
            into.texts.append(url_placeholder(uri, str(part.get("modality") or "file")))
        else:
            into.texts.append(
                media_placeholder(part.get("modality"), part.get("mime_type"), reference=_str(uri))
            )
    else:
        into.texts.append(f"[{kind or 'unknown'} part]")


def turn_from_genai(message: Mapping[str, Any], default_role: Role = "user") -> Turn | None:
    """A turn from a GenAI semconv message ``{role, parts[], name?, finish_reason?}``.

    Messages written in the older ``{role, content}`` shape are read as chat messages.
    """
    parts = message.get("parts")
    if not isinstance(parts, list):
        return turn_from_chat(message, default_role)
    collected = _Collected([], [], [])
    for part in parts:
        if isinstance(part, dict) and not is_hidden(part):
            _genai_part(part, collected)
    role, original = map_role(message.get("role"), default_role)
    return _turn(role, original, collected, message.get("name"), message.get("finish_reason"))


def turns_from_genai(value: Any, default_role: Role = "user") -> tuple[list[Turn], str | None]:
    """Turns from ``gen_ai.input.messages`` / ``gen_ai.output.messages``.

    The value is a JSON string on spans and a structured value on events; a problem is
    described when it is neither a list of messages.
    """
    messages, problem = parse_json_value(value)
    if problem is not None:
        return [], problem
    if not isinstance(messages, list):
        return [], "expected a list of messages"
    turns = [
        turn
        for item in messages
        if isinstance(item, dict) and (turn := turn_from_genai(item, default_role)) is not None
    ]
    return turns, None


def turn_from_instructions(value: Any) -> tuple[Turn | None, str | None]:
    """The system turn of ``gen_ai.system_instructions`` (a list of parts, not messages)."""
    parts, problem = parse_json_value(value)
    if problem is not None:
        return None, problem
    if isinstance(parts, str):
        parts = [{"type": "text", "content": parts}]
    if not isinstance(parts, list):
        return None, "expected a list of parts"
    return turn_from_genai({"role": "system", "parts": parts}, "system"), None


def _chat_content(content: Any, into: _Collected) -> None:
    if isinstance(content, str):
        into.texts.append(content)
    elif isinstance(content, list):
        for item in content:
            if isinstance(item, str):
                into.texts.append(item)
            elif isinstance(item, dict) and not is_hidden(item):
                _chat_content_item(item, into)
    elif isinstance(content, dict):
        _chat_content([content], into)


def _chat_content_item(item: Mapping[str, Any], into: _Collected) -> None:
    kind = item.get("type")
    if kind in ("text", "input_text", "output_text") or (kind is None and "text" in item):
        text = item.get("text", item.get("content"))
        if isinstance(text, str):
            into.texts.append(text)
    elif kind == "image_url":
        image = item.get("image_url")
        into.texts.append(url_placeholder(image.get("url") if isinstance(image, dict) else image))
    elif kind in ("blob", "file", "uri", "tool_call", "tool_call_response"):
        _genai_part(item, into)
    else:
        into.texts.append(f"[{kind or 'unknown'} part]")


def chat_requests(tool_calls: Any) -> list[ToolRequest]:
    """Requests from OpenAI-style ``tool_calls: [{id, function: {name, arguments}}]``."""
    requests: list[ToolRequest] = []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else call
        requests.append(
            ToolRequest(
                _str(call.get("id")),
                str(function.get("name") or "tool"),
                parse_arguments(function.get("arguments")),
            )
        )
    return requests


def turn_from_chat(message: Mapping[str, Any], default_role: Role = "user") -> Turn | None:
    """A turn from an OpenAI-style ``{role, content, tool_calls?, tool_call_id?}`` message.

    This is the shape of deprecated GenAI event bodies and of legacy prompt attributes.
    """
    role, original = map_role(message.get("role"), default_role)
    collected = _Collected([], chat_requests(message.get("tool_calls")), [])
    _chat_content(message.get("content"), collected)
    if role == "tool":
        call_id = _str(message.get("tool_call_id") or message.get("id"))
        collected.responses.append(ToolResponse(call_id, "\n\n".join(collected.texts)))
        collected.texts.clear()
    return _turn(role, original, collected, message.get("name"), message.get("finish_reason"))


def _turn(
    role: Role, original: str | None, collected: _Collected, name: Any, finish_reason: Any
) -> Turn | None:
    turn = Turn(
        role=role,
        text="\n\n".join(t for t in collected.texts if t),
        requests=tuple(collected.requests),
        responses=tuple(collected.responses),
        name=_str(name),
        finish_reason=_str(finish_reason),
        original_role=original,
    )
    return None if turn.is_empty else turn


def _str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)
