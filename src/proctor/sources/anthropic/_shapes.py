"""The shapes of Anthropic Messages input: recognising them and splitting them into exchanges.

Accepted shapes (research §5.3): a JSON array of messages; a request ``{system,
messages}``; a response ``{id: "msg_…", type: "message", role, content, usage}``; a
``{request, response}`` pair; a JSON array or JSON Lines file of such records; and JSON
Lines with one message per line.

A plain ``[{role, content: "text"}]`` list is valid in several formats, so a file is
claimed only when something in it is specific to Anthropic (a top-level ``system``, a
``tool_use``/``tool_result``/``thinking`` block, a response object); otherwise the OpenAI
Chat adapter, which comes later in detection order, reads it. Claude Code logs are not
claimed: their lines wrap a ``message`` in a ``type``/``uuid``/``sessionId`` envelope.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from proctor.sources._common import (
    Exchange,
    Located,
    Record,
    as_object,
    content_digest,
    json_type_name,
    mostly,
    named,
)
from proctor.sources.anthropic._blocks import block_text
from proctor.transcript import SourceIssue

ROLES = frozenset({"user", "assistant"})
COMMON_BLOCK_TYPES = frozenset({"text"})
SPECIFIC_BLOCK_TYPES = frozenset(
    {
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
    }
)
"""Block types only the Anthropic format has (plus ``*_tool_result`` server results)."""
_RECORD_KEYS = frozenset({"messages", "request", "response", "content", "system", "model"})
_MESSAGE_KEYS = frozenset({"role", "content"})
"""Keys that make an object a (damaged) record or message of this format."""


def _is_specific_block(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return isinstance(kind, str) and (kind in SPECIFIC_BLOCK_TYPES or kind.endswith("_tool_result"))


def is_message(value: Any) -> bool:
    """True for a dict shaped like an Anthropic message (string or typed-block content)."""
    if not isinstance(value, dict) or not named(value.get("role"), ROLES):
        return False
    content = value.get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(b, dict) and (named(b.get("type"), COMMON_BLOCK_TYPES) or _is_specific_block(b))
        for b in content
    )


def _message_is_specific(message: dict[str, Any]) -> bool:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return message.get("type") == "message" or any(_is_specific_block(b) for b in blocks)


def is_request(value: Any) -> bool:
    """A ``{messages: [...]}`` request whose messages are Anthropic messages."""
    messages = value.get("messages") if isinstance(value, dict) else None
    system = value.get("system") if isinstance(value, dict) else None
    return (
        isinstance(messages, list)
        and all(is_message(m) for m in messages)
        and isinstance(system, str | list | None)
    )


def is_response(value: Any) -> bool:
    """A Messages API response: ``type: "message"``, role assistant, block content."""
    return (
        isinstance(value, dict)
        and value.get("type") == "message"
        and value.get("role") == "assistant"
        and is_message(value)
    )


def _is_pair(value: dict[str, Any]) -> bool:
    return "request" in value or ("response" in value and "content" not in value)


def is_record(value: Any) -> bool:
    """A request, a response, or a ``{request, response}`` pair."""
    if not isinstance(value, dict):
        return False
    if _is_pair(value):
        request, response = value.get("request"), value.get("response")
        return (
            (request is not None or response is not None)
            and (request is None or is_request(request))
            and (response is None or is_response(response))
        )
    return is_request(value) or is_response(value)


def is_specific(value: Any) -> bool:
    """True when a record or message has something only the Anthropic format has."""
    if not isinstance(value, dict):
        return False
    if is_response(value) or _message_is_specific(value):
        return True
    if "system" in value or "anthropic_version" in value:
        return True
    messages = value.get("messages")
    if isinstance(messages, list):
        return any(isinstance(m, dict) and _message_is_specific(m) for m in messages)
    return any(is_specific(value.get(key)) for key in ("request", "response"))


def looks_like_anthropic(document: Any) -> bool:
    """True for a JSON document in one of the accepted shapes with Anthropic specifics."""
    if isinstance(document, list):
        if not document:
            return False
        shaped = mostly(document, is_message, _MESSAGE_KEYS) or mostly(
            document, is_record, _RECORD_KEYS
        )
        return shaped and any(is_specific(item) for item in document)
    return is_record(document) and is_specific(document)


def looks_like_anthropic_lines(records: list[dict[str, Any]]) -> bool:
    """True for JSON Lines of Anthropic records (or messages), one of them specific."""
    if not records:
        return False
    shaped = mostly(records, is_record, _RECORD_KEYS) or mostly(records, is_message, _MESSAGE_KEYS)
    return shaped and any(is_specific(r) for r in records)


# --- exchanges ---------------------------------------------------------------------------


def content_key(message: Any) -> str:
    """What makes two copies of a message the same: role, visible text, tool ids.

    Thinking blocks are left out, so a response and its echo in the next request (which
    must carry the thinking back) compare equal.
    """
    if not isinstance(message, dict):
        return content_digest("raw", message)
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    visible = []
    for block in blocks:
        block = as_object(block)
        identity = block.get("id") or block.get("tool_use_id")
        visible.append(identity if isinstance(identity, str) else (block_text(block) or "").strip())
    return content_digest(message.get("role"), [v for v in visible if v])


def keys_of(sent: Sequence[Located]) -> list[str]:
    """Content keys of a sent history."""
    return [content_key(item.value) for item in sent]


def exchanges_from_records(
    records: Sequence[Record], file: str
) -> Iterator[Exchange | SourceIssue]:
    """Split a file's records into exchanges; a record in no accepted shape is an issue."""
    if records and all(_is_bare_message(r.value) for r in records):
        sent = [Located(r.value, "", r.line) for r in records]
        yield _exchange(records[0], "", {}, {}, sent=sent)
        return
    for record in records:
        value = record.value
        if value == []:
            yield SourceIssue(file, "an empty list; nothing to import", record.line, "warning")
        elif _is_item_list(value):
            yield _bare_list(record, value)
        elif isinstance(value, list):
            for position, item in enumerate(value):
                yield from _from_object(file, record, f"[{position}]", item)
        elif _is_bare_message(value):
            yield _exchange(record, "", {"messages": [value]}, {})
        else:
            yield from _from_object(file, record, "", value)


def _is_bare_message(value: Any) -> bool:
    return isinstance(value, dict) and "role" in value and value.get("type") != "message"


def _from_object(
    file: str, record: Record, prefix: str, value: Any
) -> Iterator[Exchange | SourceIssue]:
    where = prefix or ("the document" if record.line is None else "the line")
    if not isinstance(value, dict):
        reason = f"{where} is {json_type_name(value)}; expected messages or a request/response"
        yield SourceIssue(file, reason, record.line)
        return
    dot = f"{prefix}." if prefix else ""
    if _is_pair(value):
        request, response = value.get("request"), value.get("response")
        if not isinstance(request, dict | None) or not isinstance(response, dict | None):
            yield SourceIssue(file, f"{where}: request and response must be objects", record.line)
            return
        yield _exchange(record, dot, request or {}, response or {}, split=True)
    elif "messages" in value:
        yield _exchange(record, dot, value, {})
    elif value.get("type") == "message":
        yield _exchange(record, dot, {}, value)
    else:
        reason = (
            f'{where} has neither "messages" nor a response message; '
            "it is not an Anthropic Messages request or response"
        )
        yield SourceIssue(file, reason, record.line)


def _exchange(
    record: Record,
    prefix: str,
    request: dict[str, Any],
    response: dict[str, Any],
    *,
    split: bool = False,
    sent: list[Located] | None = None,
) -> Exchange:
    request_path = f"{prefix}request." if split else prefix
    response_path = f"{prefix}response" if split else (prefix.rstrip(".") or "")
    if sent is None:
        messages = request.get("messages")
        sent = [
            Located(m, f"{request_path}messages[{i}]", record.line)
            for i, m in enumerate(messages if isinstance(messages, list) else [])
        ]
    system = request.get("system")
    if system:  # the system prompt is the history's first message
        system_message = {"role": "system", "content": system}
        sent = [Located(system_message, f"{request_path}system", record.line), *sent]
    sent = merge_split_messages(sent)
    received = [Located(response, response_path, record.line)] if response else []
    return Exchange(
        record,
        sent=sent,
        received=received,
        request=request,
        response=response,
        sent_keys=keys_of(sent),
    )


def merge_split_messages(sent: list[Located]) -> list[Located]:
    """Join consecutive copies of one response (same ``id``) into one message.

    Claude Code writes each content block of a response as its own line carrying the same
    message id; lists built from such lines repeat the id. The last copy's metadata
    (usage, stop reason) is the final one.
    """
    merged: list[Located] = []
    for item in sent:
        previous = merged[-1].value if merged else None
        message_id = as_object(item.value).get("id")
        if (
            isinstance(message_id, str)
            and isinstance(previous, dict)
            and previous.get("id") == message_id
            and isinstance(previous.get("content"), list)
            and isinstance(item.value.get("content"), list)
        ):
            combined = {**item.value, "content": [*previous["content"], *item.value["content"]]}
            merged[-1] = Located(combined, merged[-1].path, merged[-1].line)
        else:
            merged.append(item)
    return merged


def _bare_list(record: Record, values: list[Any]) -> Exchange:
    """A document that is just a list: its elements are named ``[index]`` in issues."""
    located = [Located(value, f"[{index}]", record.line) for index, value in enumerate(values)]
    sent = merge_split_messages(located)
    return Exchange(record, sent=sent, sent_keys=keys_of(sent))


def _is_item_list(value: Any) -> bool:
    """A list of messages rather than of records (a malformed message still counts)."""
    return isinstance(value, list) and not any(
        isinstance(v, dict) and {"messages", "request", "response"} & set(v) for v in value
    )
