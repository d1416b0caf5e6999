"""Turn one conversation's Anthropic Messages exchanges into a ``ConversationBundle``.

Ids: a message with its own id (a response, ``msg_…``) is ``anthropic:<conversation
key>:<msg id>``; other messages are ``anthropic:<conversation key>:<position>``, their
position once repeated histories are deduplicated. Tool calls use their ``toolu_…`` /
``srvtoolu_…`` ids: ``anthropic:<conversation key>:tool:<id>``.

``thinking`` and ``redacted_thinking`` blocks are dropped before anything else looks at
the content (SPEC ING-3). A user message holding only ``tool_result`` blocks is not a
prompt: it completes the calls and produces no message.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from proctor.sources._builder import ConversationBuilder
from proctor.sources._common import (
    Exchange,
    HistoryDeduper,
    Located,
    as_count,
    as_object,
    as_text,
    conversation_key,
    join_text,
    json_type_name,
    parse_arguments,
    parse_time,
)
from proctor.sources.anthropic._blocks import (
    CALL_BLOCK_TYPES,
    HIDDEN_BLOCK_TYPES,
    block_text,
    is_result_block,
    result_view,
)
from proctor.sources.anthropic._shapes import content_key
from proctor.transcript import (
    ConversationBundle,
    Message,
    MessageKind,
    Role,
    ToolCall,
    Usage,
)

FORMAT = "anthropic"

_KINDS: dict[str, tuple[Role, MessageKind]] = {
    "system": ("system", "instructions"),
    "user": ("user", "prompt"),
    "assistant": ("assistant", "reply"),
}


def anthropic_usage(usage: Any) -> Usage | None:
    """Usage of one Messages API response (cache reads and writes kept apart from input)."""
    if not isinstance(usage, dict):
        return None
    return Usage(
        input_tokens=as_count(usage.get("input_tokens")),
        output_tokens=as_count(usage.get("output_tokens")),
        cache_read_tokens=as_count(usage.get("cache_read_input_tokens")),
        cache_write_tokens=as_count(usage.get("cache_creation_input_tokens")),
    )


class _ConversationBuilder(ConversationBuilder):
    """Collects the Messages API messages and tool blocks of one conversation in order."""

    def add(self, item: Located, *, model: str | None = None) -> None:
        """Add one message (history or response); its tool blocks become tool calls."""
        position = self.take_position()
        raw = item.value
        blocks = self._blocks(item)
        if blocks is None:
            return
        role = raw["role"]
        source_id = self.source_id_once(item, as_text(raw.get("id")), position, "message id")
        texts: list[str | None] = []
        completed_only = bool(blocks)
        for index, block in enumerate(blocks):
            where = Located(block, f"{item.path}.content[{index}]", item.line)
            if not isinstance(block, dict):
                self.warn(where, f"content block is {json_type_name(block)}; skipped")
                continue
            kind = block.get("type")
            if not isinstance(kind, str | None):
                kind = None  # a damaged type: the block is read by what it holds
            if kind in HIDDEN_BLOCK_TYPES:
                continue
            if kind in CALL_BLOCK_TYPES:
                self._issue_call(where, block, source_id, index)
            elif is_result_block(block):
                self._complete(where, block, position, index)
                continue
            else:
                texts.append(block_text(block))
            completed_only = False
        if role == "user" and completed_only:
            return
        message_role, kind = _KINDS[role]
        attributes = {"stop_reason": raw["stop_reason"]} if as_text(raw.get("stop_reason")) else {}
        self.messages.append(
            Message(
                source_id=source_id,
                role=message_role,
                kind=kind,
                text=join_text(texts),
                parent_source_id=self.last_message_id,
                model=(as_text(raw.get("model")) or model) if role == "assistant" else None,
                usage=anthropic_usage(raw.get("usage")),
                attributes=attributes,
            )
        )
        self.last_message_id = source_id

    def _blocks(self, item: Located) -> list[Any] | None:
        """The message's content as blocks, or None (with an issue) when it is unusable."""
        raw = item.value
        if not isinstance(raw, dict):
            self.skip(item, f"expected a message object, got {json_type_name(raw)}; skipped")
            return None
        role = raw.get("role")
        if not isinstance(role, str) or role not in _KINDS:
            reason = 'message has no "role"' if role is None else f"unknown role {role!r:.60}"
            self.skip(item, f"{reason}; message skipped")
            return None
        content = raw.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if isinstance(content, list):
            return content
        if content is not None:
            reason = f"content is {json_type_name(content)}, expected a string or blocks"
            self.warn(item, f"{reason}; message kept without text")
        return []

    def _issue_call(
        self, where: Located, block: dict[str, Any], message_id: str, index: int
    ) -> None:
        call_id = as_text(block.get("id"))
        raw_input = block.get("input")
        arguments = parse_arguments(raw_input)
        if arguments.problem:
            self.warn(where, f"tool input {arguments.problem}")
        attributes: dict[str, Any] = {}
        if block.get("type") != "tool_use":
            attributes["server_tool"] = True
        if as_text(block.get("server_name")):
            attributes["server_name"] = block["server_name"]
        by_call_id = f"{self.conversation_id}:tool:{call_id}" if call_id else None
        source_id = self.ledger.source_id_for(by_call_id, f"{message_id}:tool:{index}")
        if by_call_id is not None and source_id != by_call_id:
            self.warn(where, f"tool id {call_id} was used before; this call is kept by position")
        call = ToolCall(
            source_id,
            as_text(block.get("name")) or "unknown",
            arguments.value,
            call_id=call_id,
            message_source_id=message_id,
            attributes=attributes,
        )
        if not self.ledger.issue(call):
            self.warn(where, f"tool call {call_id} appears twice; the copy was skipped")

    def _complete(self, where: Located, block: dict[str, Any], position: int, index: int) -> None:
        call_id = as_text(block.get("tool_use_id"))
        view = result_view(block)
        source_id = self.ledger.find(call_id)
        if source_id is None:
            self.warn(
                where,
                f"tool result for {call_id or 'a call without id'} has no matching tool call; "
                "kept as a call of unknown name",
            )
            orphan_id = f"{self.conversation_id}:" + (
                f"tool:{call_id}" if call_id else f"{position}:result:{index}"
            )
            self.ledger.orphan(orphan_id, view.text, name=None, status=view.status, call_id=call_id)
        elif not self.ledger.complete(source_id, view.text, view.status, exit_code=view.exit_code):
            self.warn(where, f"a second result for tool call {call_id}; ignored")


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
        for item in exchange.received:
            dedupe.add(content_key(item.value))
            model = as_text(as_object(item.value).get("model")) or model
            builder.add(item, model=model)
        record = as_object(exchange.record.value)
        found = parse_time(record.get("timestamp") or record.get("created_at"))
        if found is not None:
            times.append(found)
    return builder.bundle(len(group), model, times)
