"""The shapes of OpenAI Responses input: recognising them and splitting them into exchanges.

Accepted shapes (research §5.2): a bare JSON array of items; a response object ``{id:
"resp_…", object: "response", output, usage}``; a request ``{model, input,
instructions}``; an ``{input, output}`` record; a ``{request, response}`` pair; and JSON
Lines of any of these (or one item per line).

Codex CLI rollouts are not claimed: their lines are ``{timestamp, type, payload}``
envelopes whose payloads are Responses items, and the Codex adapter reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from proctor.sources._common import (
    Exchange,
    Located,
    Record,
    as_object,
    as_text,
    content_digest,
    json_type_name,
    mostly,
    named,
)
from proctor.sources.openai_responses._items import (
    ITEM_TYPES,
    MESSAGE,
    PART_TYPES,
    call_view,
    content_text,
)
from proctor.transcript import SourceIssue

ROLES = frozenset({"user", "assistant", "system", "developer"})


_RECORD_KEYS = frozenset({"input", "output", "request", "response", "instructions", "model"})
"""Keys that make an object a (damaged) record of this format."""


def is_item(value: Any) -> bool:
    """True for a Responses item, or an "easy" input message ``{role, content}``."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind is None or kind == MESSAGE:
        content = value.get("content")
        parts_ok = isinstance(content, str) or (
            isinstance(content, list)
            and all(named(as_object(p).get("type"), PART_TYPES) for p in content)
        )
        return named(value.get("role"), ROLES) and parts_ok
    return named(kind, ITEM_TYPES)


def is_specific(item: dict[str, Any]) -> bool:
    """True for an item only the Responses API has (not a plain role/content message)."""
    if item.get("type") not in (None, MESSAGE):
        return True
    content = item.get("content")
    return isinstance(content, list) and bool(content)


def _items_ok(items: Any, *, specific: bool) -> bool:
    if isinstance(items, str):
        return not specific
    return (
        isinstance(items, list)
        and all(is_item(i) for i in items)
        and (not specific or any(is_specific(i) for i in items))
    )


def is_response(value: Any) -> bool:
    """A response object: ``object: "response"`` or a ``resp_`` id, with ``output`` items."""
    if not isinstance(value, dict) or not isinstance(value.get("output"), list):
        return False
    marked = value.get("object") == "response" or str(value.get("id", "")).startswith("resp_")
    return marked and _items_ok(value["output"], specific=False)


def is_request(value: Any) -> bool:
    """A request ``{input, …}``: input items with Responses specifics, or text and a model."""
    if not isinstance(value, dict) or "input" not in value or "messages" in value:
        return False
    items = value["input"]
    if isinstance(items, str):
        return isinstance(value.get("model"), str)
    return _items_ok(items, specific=True) or (
        _items_ok(items, specific=False) and "instructions" in value
    )


def is_record(value: Any) -> bool:
    """A response, a request, an ``{input, output}`` record or a ``{request, response}`` pair."""
    if not isinstance(value, dict):
        return False
    if "request" in value or "response" in value:
        request, response = value.get("request"), value.get("response")
        return (
            (request is not None or response is not None)
            and (request is None or is_request(request))
            and (response is None or is_response(response))
        )
    if is_response(value) or is_request(value):
        return True
    inputs, outputs = value.get("input"), value.get("output")
    if not isinstance(outputs, list):
        return False
    items = [*(inputs if isinstance(inputs, list) else []), *outputs]
    return _items_ok(items, specific=True)


def looks_like_responses(document: Any) -> bool:
    """True for a JSON document in one of the accepted shapes."""
    if isinstance(document, list):
        return _items_ok(document, specific=True) or mostly(document, is_record, _RECORD_KEYS)
    return is_record(document)


def looks_like_responses_lines(records: list[dict[str, Any]]) -> bool:
    """True for JSON Lines of Responses records, or of items (one of them specific)."""
    return mostly(records, is_record, _RECORD_KEYS) or _items_ok(records, specific=True)


# --- exchanges ---------------------------------------------------------------------------


def content_key(item: Any) -> str:
    """What makes two copies of an item the same: type, role, visible text, call identity.

    Item ids are left out: an output item echoed in the next request may omit them.
    """
    item = as_object(item)
    kind = item.get("type") or MESSAGE
    if not isinstance(kind, str):
        return content_digest("raw", item)
    if kind == MESSAGE:
        return content_digest(kind, item.get("role"), content_text(item.get("content")).strip())
    call_id = as_text(item.get("call_id"))
    if call_id is not None:
        return content_digest(kind, call_id)
    if as_text(item.get("id")) is not None:
        return content_digest(kind, item["id"])
    return content_digest(kind, call_view(item).arguments if kind.endswith("_call") else item)


def keys_of(sent: Sequence[Located]) -> list[str]:
    """Content keys of a sent history."""
    return [content_key(item.value) for item in sent]


def exchanges_from_records(
    records: Sequence[Record], file: str
) -> Iterator[Exchange | SourceIssue]:
    """Split a file's records into exchanges; a record in no accepted shape is an issue."""
    if records and all(_is_bare_item(r.value) for r in records):
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
        elif _is_bare_item(value):
            yield _exchange(record, "", {"input": [value]}, {})
        else:
            yield from _from_object(file, record, "", value)


def _is_bare_item(value: Any) -> bool:
    """An item rather than a record (items have a ``type``, or are role/content messages)."""
    return isinstance(value, dict) and not _is_record_like(value)


def _from_object(
    file: str, record: Record, prefix: str, value: Any
) -> Iterator[Exchange | SourceIssue]:
    where = prefix or ("the document" if record.line is None else "the line")
    if not isinstance(value, dict):
        reason = f"{where} is {json_type_name(value)}; expected items or a request/response"
        yield SourceIssue(file, reason, record.line)
        return
    dot = f"{prefix}." if prefix else ""
    if "request" in value or "response" in value:
        request, response = value.get("request"), value.get("response")
        if not isinstance(request, dict | None) or not isinstance(response, dict | None):
            yield SourceIssue(file, f"{where}: request and response must be objects", record.line)
            return
        yield _exchange(record, dot, request or {}, response or {}, split=True)
    elif "input" in value or "output" in value:
        response = value if "output" in value else {}
        yield _exchange(record, dot, value if "input" in value else {}, response)
    else:
        reason = f'{where} has neither "input" nor "output"; it is not a Responses record'
        yield SourceIssue(file, reason, record.line)


def _exchange(
    record: Record,
    prefix: str,
    request: dict[str, Any],
    response: dict[str, Any],
    *,
    split: bool = False,
) -> Exchange:
    request_path = f"{prefix}request." if split else prefix
    response_path = f"{prefix}response." if split else prefix
    sent: list[Located] = []
    instructions = request.get("instructions") or response.get("instructions")
    if isinstance(instructions, str) and instructions:
        # Instructions are the system message the API inserts before the input.
        system = {"type": MESSAGE, "role": "system", "content": instructions}
        sent.append(Located(system, f"{request_path}instructions", record.line))
    items = request.get("input")
    if isinstance(items, str):
        user = {"type": MESSAGE, "role": "user", "content": items}
        sent.append(Located(user, f"{request_path}input", record.line))
    elif isinstance(items, list):
        sent += [Located(i, f"{request_path}input[{n}]", record.line) for n, i in enumerate(items)]
    output = response.get("output")
    received = [
        Located(item, f"{response_path}output[{n}]", record.line)
        for n, item in enumerate(output if isinstance(output, list) else [])
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
    """A list of items rather than of records (a malformed item still counts)."""
    return isinstance(value, list) and not any(_is_record_like(v) for v in value)


def _is_record_like(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and not named(value.get("type"), ITEM_TYPES)
        and bool({"input", "output", "request", "response"} & set(value))
    )
