"""One conversation's messages, merged from model calls that each repeat the history.

Every inference span records the whole history it sent (``gen_ai.input.messages``) plus
the reply. Imported naively, turn one appears once per later call. ``History`` keeps
each message once and in conversation order.

A message is recognised by its role and content plus its *occurrence*: the second
identical "continue" in a history is a different message from the first. Counting
occurrences of identical messages, rather than using the absolute index in the
history, keeps messages recognisable when an instrumentation records the system
instructions on some calls and not others, or trims the oldest turns of a long
history. A new message is placed right after the last already-known message that
precedes it in the call's history, so calls read in start order rebuild the order of
the conversation even when the history arrives out of step.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from proctor.sources.otel._operations import Exchange, SpanNode
from proctor.sources.otel._turns import Turn
from proctor.transcript import Usage


@dataclass(slots=True)
class HistoryEntry:
    """One distinct message and the model call that first recorded it."""

    key: str
    turn: Turn
    node: SpanNode
    is_output: bool
    """True when the message was first seen as a model reply (not as sent history)."""
    usage: Usage | None = None
    model: str | None = None
    response_id: str | None = None

    @property
    def created_at(self) -> datetime | None:
        """When the message existed: the call's end for replies, its start for history."""
        return self.node.ended_at if self.is_output else self.node.started_at


class History:
    """Messages of one conversation, each once, in conversation order."""

    def __init__(self) -> None:
        self._order: list[str] = []
        self._position: dict[str, int] = {}
        self._entries: dict[str, HistoryEntry] = {}

    def add(self, node: SpanNode, exchange: Exchange) -> None:
        """Merge one model call's history and replies into the conversation.

        Args:
            node: The span that made the call (its times date new messages).
            exchange: What the call sent and received; its usage goes to its first reply.
        """
        seen: Counter[str] = Counter()
        cursor = -1
        first_reply: HistoryEntry | None = None
        turns = [(turn, False) for turn in exchange.inputs]
        turns += [(turn, True) for turn in exchange.outputs]
        for turn, is_output in turns:
            content = turn.content_key()
            key = f"{content}.{seen[content]}"
            seen[content] += 1
            entry = self._entries.get(key)
            if entry is None:
                cursor += 1
                entry = HistoryEntry(key, turn, node, is_output)
                self._insert(cursor, entry)
            else:
                cursor = self._position[key]
                if is_output and not entry.is_output:
                    # The call that produced a message is its origin, even when another
                    # call that started earlier already sent it as history.
                    entry.is_output, entry.node = True, node
            if is_output and first_reply is None:
                first_reply = entry
        if first_reply is not None:
            self._credit(first_reply, exchange)

    @staticmethod
    def _credit(entry: HistoryEntry, exchange: Exchange) -> None:
        """Record the call's model and usage on its first reply, once per model response.

        A reply already credited (the same call recorded twice, as a span and as log
        events) keeps its first usage, so tokens are never counted twice.
        """
        if entry.usage is None:
            entry.usage = exchange.usage
        entry.model = entry.model or exchange.model
        entry.response_id = entry.response_id or exchange.response_id

    def _insert(self, index: int, entry: HistoryEntry) -> None:
        self._entries[entry.key] = entry
        if index >= len(self._order):
            self._position[entry.key] = len(self._order)
            self._order.append(entry.key)
            return
        self._order.insert(index, entry.key)
        for position in range(index, len(self._order)):
            self._position[self._order[position]] = position

    def entries(self) -> list[HistoryEntry]:
        """Every distinct message, in conversation order."""
        return [self._entries[key] for key in self._order]
