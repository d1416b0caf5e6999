"""Turn one conversation's Chat Completions exchanges into a ``ConversationBundle``.

Ids: Chat Completions messages have no ids, so a message is ``openai_chat:<conversation
key>:<position>``, its position in the conversation once repeated histories are
deduplicated; a message returned in a response is ``…:<response id>:<choice index>``.
Tool calls use their own ids: ``openai_chat:<conversation key>:call:<tool_call id>``.

Hidden reasoning (``reasoning_content``, ``reasoning``, ``reasoning_details``, reasoning
parts) is never read; only the reasoning token count is kept (SPEC ING-3).
"""

from __future__ import annotations

from collections.abc import Iterator
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
    join_text,
    json_type_name,
    parse_arguments,
    parse_time,
    render_value,
)
from proctor.sources.openai_chat._content import content_text
from proctor.sources.openai_chat._shapes import ROLES, content_key
from proctor.transcript import (
    ConversationBundle,
    Message,
    MessageKind,
    Role,
    ToolCall,
    ToolStatus,
    Usage,
)

FORMAT = "openai_chat"

_KINDS: dict[str, tuple[Role, MessageKind]] = {
    "system": ("system", "instructions"),
    "developer": ("developer", "instructions"),
    "user": ("user", "prompt"),
    "assistant": ("assistant", "reply"),
}


def chat_usage(usage: Any) -> Usage | None:
    """Usage of one Chat Completions response; cached prompt tokens are counted once."""
    if not isinstance(usage, dict):
        return None
    prompt = as_count(usage.get("prompt_tokens"))
    cached = as_count(as_object(usage.get("prompt_tokens_details")).get("cached_tokens"))
    # DeepSeek and some compatible servers report cache hits at the top level.
    cached = min(cached or as_count(usage.get("prompt_cache_hit_tokens")), prompt)
    details = as_object(usage.get("completion_tokens_details"))
    reasoning = as_count(details.get("reasoning_tokens") or usage.get("reasoning_tokens"))
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=as_count(usage.get("completion_tokens")),
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


class _ConversationBuilder(ConversationBuilder):
    """Collects the Chat Completions messages and tool calls of one conversation in order."""

    def add(
        self,
        item: Located,
        *,
        suffix: str | None = None,
        model: str | None = None,
        usage: Usage | None = None,
        created_at: datetime | None = None,
        active: bool = True,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        """Add one message of the conversation (history or response)."""
        position = self.take_position()
        raw = item.value
        if not isinstance(raw, dict):
            self.skip(item, f"expected a message object, got {json_type_name(raw)}; skipped")
            return
        role = raw.get("role")
        if role is None:
            self.skip(item, 'message has no "role"; skipped')
            return
        if not isinstance(role, str) or role not in ROLES:
            self.skip(item, f"unknown role {repr(role)[:60]}; message skipped")
            return
        if role in ("tool", "function"):
            self._complete(item, raw, position)
            return
        message_role, kind = _KINDS[role]
        text = content_text(raw.get("content"))
        extra = dict(attributes or {})
        refusal = as_text(raw.get("refusal"))
        if refusal:
            text = join_text([text, refusal])
            extra["refusal"] = True
        message = Message(
            source_id=f"{self.conversation_id}:{suffix or position}",
            role=message_role,
            kind=kind,
            text=text,
            created_at=created_at,
            parent_source_id=self.last_message_id,
            on_active_branch=active,
            author=as_text(raw.get("name")),
            model=model if role == "assistant" else None,
            usage=usage,
            attributes=extra,
        )
        if role == "assistant":
            self._issue_calls(item, raw, message)
        self.messages.append(message)
        if active:
            self.last_message_id = message.source_id

    def _issue_calls(self, item: Located, raw: dict[str, Any], message: Message) -> None:
        for where, source_id, name, arguments, call_id in self._call_specs(item, raw, message):
            if arguments.problem:
                self.warn(where, arguments.problem)
            call = ToolCall(
                source_id,
                name or "unknown",
                arguments.value,
                call_id=call_id,
                message_source_id=message.source_id,
                created_at=message.created_at,
                on_active_branch=message.on_active_branch,
                attributes={"arguments_double_encoded": True} if arguments.double_encoded else {},
            )
            if not self.ledger.issue(call):
                self.warn(where, f"tool call {call_id or source_id} appears twice; copy skipped")

    def _call_specs(
        self, item: Located, raw: dict[str, Any], message: Message
    ) -> Iterator[tuple[Located, str, str | None, ParsedArguments, str | None]]:
        """``(where, source id, name, arguments, call id)`` of each call the message makes."""
        calls = raw.get("tool_calls")
        for index, call in enumerate(calls if isinstance(calls, list) else []):
            where = Located(call, f"{item.path}.tool_calls[{index}]", item.line)
            if not isinstance(call, dict):
                self.warn(where, f"tool call is {json_type_name(call)}, not an object; skipped")
                continue
            call_id = as_text(call.get("id"))
            source_id = self._call_source_id(where, call_id, f"{message.source_id}:call:{index}")
            if isinstance(call.get("custom"), dict):  # custom tools take free text, not JSON
                custom = call["custom"]
                arguments = ParsedArguments(custom.get("input"))
                yield where, source_id, as_text(custom.get("name")), arguments, call_id
            else:
                function = as_object(call.get("function"))
                arguments = parse_arguments(function.get("arguments"))
                yield where, source_id, as_text(function.get("name")), arguments, call_id
        legacy = raw.get("function_call")
        if isinstance(legacy, dict):
            where = Located(legacy, f"{item.path}.function_call", item.line)
            arguments = parse_arguments(legacy.get("arguments"))
            source_id = f"{message.source_id}:function_call"
            yield where, source_id, as_text(legacy.get("name")), arguments, None

    def _call_source_id(self, where: Located, call_id: str | None, by_position: str) -> str:
        by_call_id = f"{self.conversation_id}:call:{call_id}" if call_id else None
        source_id = self.ledger.source_id_for(by_call_id, by_position)
        if by_call_id is not None and source_id != by_call_id:
            self.warn(
                where, f"tool call id {call_id} was used before; this call is kept by position"
            )
        return source_id

    def _complete(self, item: Located, raw: dict[str, Any], position: int) -> None:
        """A tool (or legacy function) message: the result of an earlier call."""
        call_id = as_text(raw.get("tool_call_id"))
        name = as_text(raw.get("name"))
        text = content_text(raw.get("content"))
        # Not in the OpenAI spec, but exports such as AgentDojo's flag failed calls this way.
        error = raw.get("error")
        status: ToolStatus = "error" if error not in (None, "", False) else "ok"
        if status == "error" and not text.strip():
            text = render_value(error)
        source_id = self.ledger.find(call_id) if call_id else self.ledger.first_open(name)
        if source_id is None:
            label = f"call {call_id}" if call_id else f"function {name or '(unnamed)'}"
            reason = f"tool result for {label} has no matching tool call"
            self.warn(item, f"{reason}; kept as a call of unknown name")
            orphan_id = f"{self.conversation_id}:" + (
                f"call:{call_id}" if call_id else f"{position}:result"
            )
            self.ledger.orphan(orphan_id, text, name=name, status=status, call_id=call_id)
        elif not self.ledger.complete(source_id, text, status):
            self.warn(item, f"a second result for tool call {call_id or name}; ignored")


def build_bundle(group: list[Exchange], file: str) -> ConversationBundle:
    """One conversation from its exchanges, each history message imported once."""
    builder = _ConversationBuilder(file, FORMAT, conversation_key(group))
    dedupe = HistoryDeduper()
    times: list[datetime] = []
    model: str | None = None
    for exchange in group:
        model = as_text(exchange.request.get("model")) or model
        for position in dedupe.fresh(exchange.sent_keys):
            builder.add(exchange.sent[position])
        record_time = _record_time(exchange)
        if record_time is not None:
            times.append(record_time)
        model = _add_response(builder, dedupe, exchange, model)
    return builder.bundle(len(group), model, times)


def _add_response(
    builder: _ConversationBuilder,
    dedupe: HistoryDeduper,
    exchange: Exchange,
    model: str | None,
) -> str | None:
    response = exchange.response
    created_at = parse_time(response.get("created"))
    model = as_text(response.get("model")) or model
    usage = chat_usage(response.get("usage"))
    response_id = exchange.response_id
    for position, choice in enumerate(exchange.received):
        raw = as_object(choice.value)
        index = raw.get("index") if isinstance(raw.get("index"), int) else position
        message = raw.get("message")
        dedupe.add(content_key(message))
        attributes: dict[str, Any] = {"choice_index": index} if len(exchange.received) > 1 else {}
        if isinstance(raw.get("finish_reason"), str):
            attributes["finish_reason"] = raw["finish_reason"]
        suffix = f"{response_id}:{index}" if response_id else None
        builder.add(
            Located(message, f"{choice.path}.message", choice.line),
            suffix=suffix,
            model=model,
            usage=usage if position == 0 else None,  # usage belongs to the response, once
            created_at=created_at,
            # With n>1 choices only the first is taken as the conversation's continuation.
            active=position == 0,
            attributes=attributes,
        )
    return model


def _record_time(exchange: Exchange) -> datetime | None:
    created = parse_time(exchange.response.get("created"))
    if created is not None:
        return created
    value = exchange.record.value
    if isinstance(value, dict):
        for field_name in ("timestamp", "created_at", "time"):
            found = parse_time(value.get(field_name))
            if found is not None:
                return found
    return None
