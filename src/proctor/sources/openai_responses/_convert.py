"""Turn one conversation's Responses exchanges into a ``ConversationBundle``.

Ids: an item with its own id (``msg_…``) is ``openai_responses:<conversation
key>:<item id>``; other items ``openai_responses:<conversation key>:<position>``, their
position once repeated histories are deduplicated. Tool calls use ``call_id`` (or the
item id for built-in calls without one): ``openai_responses:<conversation
key>:call:<id>``. The conversation key is the first response id when the file starts with
a response object, else a content hash.

Usage belongs to the response: it goes on the response's first assistant message, or on
an empty assistant message standing for the response when its output holds only tool
calls (so it is counted once, never lost).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from proctor.sources._builder import ConversationBuilder
from proctor.sources._common import (
    Exchange,
    HistoryDeduper,
    Located,
    ParsedArguments,
    as_count,
    as_object,
    as_text,
    conversation_key,
    json_type_name,
    parse_arguments,
    parse_time,
)
from proctor.sources.openai_responses._items import (
    CALL_TYPES,
    HIDDEN_TYPES,
    IGNORED_TYPES,
    MESSAGE,
    OUTPUT_TYPES,
    call_status,
    call_view,
    content_text,
    output_view,
)
from proctor.sources.openai_responses._shapes import content_key
from proctor.transcript import (
    ConversationBundle,
    Message,
    MessageKind,
    Role,
    ToolCall,
    Usage,
)

FORMAT = "openai_responses"

_KINDS: dict[str, tuple[Role, MessageKind]] = {
    "system": ("system", "instructions"),
    "developer": ("developer", "instructions"),
    "user": ("user", "prompt"),
    "assistant": ("assistant", "reply"),
}


def responses_usage(usage: Any) -> Usage | None:
    """Usage of one response; cached input tokens are counted once."""
    if not isinstance(usage, dict):
        return None
    total_input = as_count(usage.get("input_tokens"))
    cached = as_count(as_object(usage.get("input_tokens_details")).get("cached_tokens"))
    reasoning = as_count(as_object(usage.get("output_tokens_details")).get("reasoning_tokens"))
    return Usage(
        input_tokens=max(total_input - cached, 0),
        output_tokens=as_count(usage.get("output_tokens")),
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


class _ConversationBuilder(ConversationBuilder):
    """Collects the Responses items of one conversation in order."""

    def __init__(self, file: str, format_name: str, key: str) -> None:
        super().__init__(file, format_name, key)
        self.speaker: str | None = None
        """The assistant message calls are attributed to (reset by each user message)."""

    def add(
        self,
        item: Located,
        *,
        model: str | None = None,
        created_at: datetime | None = None,
        usage: Usage | None = None,
    ) -> bool:
        """Add one item; True when it became an assistant message (usage was placed)."""
        position = self.take_position()
        raw = item.value
        if not isinstance(raw, dict):
            self.skip(item, f"expected an item object, got {json_type_name(raw)}; skipped")
            return False
        kind = raw.get("type") or MESSAGE
        if not isinstance(kind, str):
            self.skip(item, f"item type is {json_type_name(kind)}, not a name; skipped")
            return False
        if kind in HIDDEN_TYPES or kind in IGNORED_TYPES:
            return False
        if kind == MESSAGE:
            return self._message(item, raw, position, model, created_at, usage)
        if kind in CALL_TYPES:
            self._call(item, raw, position, created_at)
        elif kind in OUTPUT_TYPES:
            self._output(item, raw, position)
        else:
            self.warn(item, f"unknown item type {kind!r}; skipped")
        return False

    def add_response_turn(self, response_id: str | None, model: str | None, **more: Any) -> None:
        """An empty assistant message standing for a response whose output is only calls."""
        position = self.take_position()
        source_id = f"{self.conversation_id}:{response_id or position}"
        self._append(Message(source_id, "assistant", "reply", "", model=model, **more))
        self.speaker = source_id

    def _message(
        self,
        item: Located,
        raw: dict[str, Any],
        position: int,
        model: str | None,
        created_at: datetime | None,
        usage: Usage | None,
    ) -> bool:
        role = raw.get("role")
        if not isinstance(role, str) or role not in _KINDS:
            reason = 'message has no "role"' if role is None else f"unknown role {role!r:.60}"
            self.skip(item, f"{reason}; skipped")
            return False
        message_role, kind = _KINDS[role]
        source_id = self.source_id_once(item, as_text(raw.get("id")), position, "item id")
        attributes = {"status": raw["status"]} if raw.get("status") == "incomplete" else {}
        assistant: bool = role == "assistant"
        self._append(
            Message(
                source_id,
                message_role,
                kind,
                content_text(raw.get("content")),
                created_at=created_at,
                model=model if assistant else None,
                usage=usage if assistant else None,
                attributes=attributes,
            )
        )
        if assistant:
            self.speaker = source_id
        elif role == "user":
            self.speaker = None
        return assistant

    def _append(self, message: Message) -> None:
        self.messages.append(replace(message, parent_source_id=self.last_message_id))
        self.last_message_id = message.source_id

    def _call(
        self, item: Located, raw: dict[str, Any], position: int, created_at: datetime | None
    ) -> None:
        view = call_view(raw)
        arguments = (
            parse_arguments(view.arguments)
            if view.parse_arguments
            else ParsedArguments(view.arguments)
        )
        if arguments.problem:
            self.warn(item, arguments.problem)
        call_id = as_text(raw.get("call_id"))
        identity = call_id or as_text(raw.get("id"))
        by_call_id = f"{self.conversation_id}:call:{identity}" if identity else None
        source_id = self.ledger.source_id_for(by_call_id, f"{self.conversation_id}:{position}")
        if by_call_id is not None and source_id != by_call_id:
            self.warn(item, f"call id {identity} was used before; this call is kept by position")
        has_result = view.result is not None
        attributes: dict[str, Any] = (
            {"item_type": raw["type"]} if raw["type"] != "function_call" else {}
        )
        if as_text(raw.get("server_label")):
            attributes["server_label"] = raw["server_label"]
        call = ToolCall(
            source_id,
            view.name,
            arguments.value,
            call_id=call_id or as_text(raw.get("id")),
            message_source_id=self.speaker,
            status=view.status or call_status(raw, has_result=has_result),
            result_text=view.result,
            created_at=created_at,
            completed_at=created_at if has_result else None,
            attributes=attributes,
        )
        if not self.ledger.issue(call, completed=has_result):
            self.warn(item, f"tool call {identity} appears twice; the copy was skipped")

    def _output(self, item: Located, raw: dict[str, Any], position: int) -> None:
        call_id = as_text(raw.get("call_id"))
        view = output_view(raw)
        source_id = self.ledger.find(call_id)
        if source_id is None:
            self.warn(
                item,
                f"output for call {call_id or '(no call_id)'} has no matching call; "
                "kept as a call of unknown name",
            )
            orphan_id = f"{self.conversation_id}:" + (
                f"call:{call_id}" if call_id else f"{position}:output"
            )
            self.ledger.orphan(orphan_id, view.text, name=None, status=view.status, call_id=call_id)
        elif not self.ledger.complete(source_id, view.text, view.status, exit_code=view.exit_code):
            self.warn(item, f"a second output for call {call_id}; ignored")


def _is_reply(item: Any) -> bool:
    fields = as_object(item)
    return bool(fields.get("type", MESSAGE) == MESSAGE and fields.get("role") == "assistant")


def build_bundle(group: list[Exchange], file: str) -> ConversationBundle:
    """One conversation from its exchanges, each history item imported once."""
    builder = _ConversationBuilder(file, FORMAT, conversation_key(group))
    dedupe = HistoryDeduper()
    times: list[datetime] = []
    model: str | None = None
    for exchange in group:
        for position in dedupe.fresh(exchange.sent_keys):
            builder.add(exchange.sent[position])
        response = exchange.response
        model = as_text(response.get("model")) or as_text(exchange.request.get("model")) or model
        created_at = parse_time(response.get("created_at"))
        if created_at is not None:
            times.append(created_at)
        usage = responses_usage(response.get("usage"))
        if usage is not None and not any(_is_reply(item.value) for item in exchange.received):
            builder.add_response_turn(
                exchange.response_id, model, created_at=created_at, usage=usage
            )
            usage = None
        for item in exchange.received:
            dedupe.add(content_key(item.value))
            if builder.add(item, model=model, created_at=created_at, usage=usage):
                usage = None  # counted once per response
    return builder.bundle(len(group), model, times)
