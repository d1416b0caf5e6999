"""The shapes of Chat Completions input: recognising them and splitting them into exchanges.

Accepted shapes (research §5.1): a JSON array of messages; a request ``{model,
messages}``; a response ``{id: "chatcmpl-…", choices, usage}``; a ``{request,
response}`` pair; Batch API lines (``{body: request}``, ``{response: {body}}``); a JSON
array or JSON Lines file of such records; and JSON Lines with one message per line.
Streaming chunk files (``chat.completion.chunk``, ``choices[].delta``) are out of scope
and not recognised.
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
    parse_arguments,
)
from proctor.sources.openai_chat._content import content_text
from proctor.transcript import SourceIssue

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
PART_TYPES = frozenset(
    {"text", "image_url", "input_audio", "file", "refusal", "reasoning", "thinking"}
)
"""Content part types of Chat Completions (plus vendor reasoning parts, dropped later)."""
_RECORD_KEYS = frozenset({"messages", "choices", "request", "response", "body", "model"})
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
"""Keys that make an object a (damaged) record or message of this format."""


def is_message(value: Any) -> bool:
    """True for a dict shaped like a Chat Completions message."""
    if not isinstance(value, dict) or not named(value.get("role"), ROLES):
        return False
    content = value.get("content")
    if isinstance(content, list):
        if not all(
            isinstance(part, str)
            or (isinstance(part, dict) and named(part.get("type"), PART_TYPES))
            for part in content
        ):
            return False
    elif content is not None and not isinstance(content, str):
        return False
    return isinstance(value.get("tool_calls"), list | None)


def _unwrap(value: Any) -> Any:
    """The request or response inside a Batch API ``body`` wrapper."""
    if isinstance(value, dict) and isinstance(value.get("body"), dict):
        return value["body"]
    return value


def is_request(value: Any) -> bool:
    """A ``{messages: [...]}`` request whose messages are Chat Completions messages."""
    value = _unwrap(value)
    messages = value.get("messages") if isinstance(value, dict) else None
    return isinstance(messages, list) and all(is_message(m) for m in messages)


def is_response(value: Any) -> bool:
    """A ``{choices: [{message}]}`` response (not a streaming chunk)."""
    value = _unwrap(value)
    if not isinstance(value, dict) or value.get("object") == "chat.completion.chunk":
        return False
    choices = value.get("choices")
    return (
        isinstance(choices, list)
        and bool(choices)
        and all(isinstance(c, dict) and is_message(c.get("message")) for c in choices)
    )


def _is_pair(value: dict[str, Any]) -> bool:
    return "request" in value or ("response" in value and "choices" not in value)


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


def looks_like_chat(document: Any) -> bool:
    """True for a JSON document in one of the accepted shapes."""
    if isinstance(document, list):
        return mostly(document, is_message, _MESSAGE_KEYS) or mostly(
            document, is_record, _RECORD_KEYS
        )
    return is_record(document)


def looks_like_chat_lines(records: list[dict[str, Any]]) -> bool:
    """True for JSON Lines where every sampled line is a chat record, or every line a message."""
    return mostly(records, is_record, _RECORD_KEYS) or mostly(records, is_message, _MESSAGE_KEYS)


def only_damaged(records: list[dict[str, Any]]) -> bool:
    """True when there are records and each is a damaged chat record or message (an
    object with one of the format's keys that fails the shape test): such a sample
    cannot tell the format, the lines after it may."""
    return bool(records) and all(
        not is_record(record)
        and not is_message(record)
        and not (_RECORD_KEYS.isdisjoint(record) and _MESSAGE_KEYS.isdisjoint(record))
        for record in records
    )


# --- exchanges ---------------------------------------------------------------------------


def content_key(message: Any) -> str:
    """What makes two copies of a message the same message: role, visible text, calls."""
    if not isinstance(message, dict):
        return content_digest("raw", message)
    role = "tool" if message.get("role") == "function" else message.get("role")
    calls: list[Any] = []
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = as_object(call.get("function"))
            arguments = parse_arguments(function.get("arguments")).value
            calls.append(call.get("id") or [function.get("name"), arguments])
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        calls.append([legacy.get("name"), parse_arguments(legacy.get("arguments")).value])
    refusal = message.get("refusal")
    return content_digest(
        role,
        content_text(message.get("content")).strip(),
        refusal if isinstance(refusal, str) else None,
        calls,
        message.get("tool_call_id"),
        message.get("name"),
    )


def keys_of(sent: Sequence[Located]) -> list[str]:
    """Content keys of a sent history."""
    return [content_key(item.value) for item in sent]


def exchanges_from_records(
    records: Sequence[Record], file: str
) -> Iterator[Exchange | SourceIssue]:
    """Split a file's records into exchanges; a record in no accepted shape is an issue."""
    if records and all(_is_bare_message(r.value) for r in records):
        # JSON Lines with one message per line: the lines are one history.
        sent = [Located(r.value, "", r.line) for r in records]
        yield Exchange(records[0], sent=sent, sent_keys=keys_of(sent))
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
    return isinstance(value, dict) and "role" in value and not {"messages", "choices"} & set(value)


def _from_object(
    file: str, record: Record, prefix: str, value: Any
) -> Iterator[Exchange | SourceIssue]:
    where = prefix or ("the document" if record.line is None else "the line")
    if not isinstance(value, dict):
        reason = (
            f"{where} is {json_type_name(value)}; expected messages or a request/response object"
        )
        yield SourceIssue(file, reason, record.line)
        return
    if _is_pair(value):
        request, response = _unwrap(value.get("request")), _unwrap(value.get("response"))
        if not isinstance(request, dict | None) or not isinstance(response, dict | None):
            yield SourceIssue(file, f"{where}: request and response must be objects", record.line)
            return
        dot = f"{prefix}." if prefix else ""
        yield _exchange(record, dot, request or {}, response or {}, split=True)
        return
    value = _unwrap(value)
    if "messages" not in value and "choices" not in value:
        reason = (
            f'{where} has neither "messages" nor "choices"; '
            "it is not a Chat Completions request or response"
        )
        yield SourceIssue(file, reason, record.line)
        return
    dot = f"{prefix}." if prefix else ""
    for key, holds in (("messages", "messages"), ("choices", "choices")):
        if key in value and not isinstance(value[key], list):
            reason = (
                f"{dot}{key} is {json_type_name(value[key])}, not a list of {holds}; "
                "they were skipped (the record is damaged)"
            )
            yield SourceIssue(file, reason, record.line)
    request = value if "messages" in value else {}
    yield _exchange(record, dot, request, value if "choices" in value else {})


def _exchange(
    record: Record,
    prefix: str,
    request: dict[str, Any],
    response: dict[str, Any],
    *,
    split: bool = False,
) -> Exchange:
    """An exchange; with ``split``, paths name ``request.`` and ``response.`` separately."""
    messages = request.get("messages")
    request_path = f"{prefix}request." if split else prefix
    response_path = f"{prefix}response." if split else prefix
    sent = [
        Located(m, f"{request_path}messages[{i}]", record.line)
        for i, m in enumerate(messages if isinstance(messages, list) else [])
    ]
    choices = response.get("choices")
    received = [
        Located(choice, f"{response_path}choices[{i}]", record.line)
        for i, choice in enumerate(choices if isinstance(choices, list) else [])
    ]
    return Exchange(
        record,
        sent=sent,
        received=received,
        request=request,
        response=response,
        sent_keys=keys_of(sent),
    )


def _bare_list(record: Record, values: list[Any]) -> Exchange:
    """A document that is just a list: its elements are named ``[index]`` in issues."""
    sent = [Located(value, f"[{index}]", record.line) for index, value in enumerate(values)]
    return Exchange(record, sent=sent, sent_keys=keys_of(sent))


def _is_item_list(value: Any) -> bool:
    """A list of messages rather than of records (a malformed message still counts)."""
    return isinstance(value, list) and not any(
        isinstance(v, dict) and {"messages", "choices", "request", "response", "body"} & set(v)
        for v in value
    )
