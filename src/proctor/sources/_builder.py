"""The part of building one conversation that the exchange-log adapters share.

The Anthropic Messages, OpenAI Chat Completions and OpenAI Responses adapters each read
a conversation out of logged request/response exchanges. How a message or a call looks
differs per format; what is collected, how a message id used twice is handled, and the
``ConversationBundle`` made at the end do not. Each adapter's builder subclasses
``ConversationBuilder`` and adds only its format's ``add``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from proctor.sources._common import CallLedger, Located
from proctor.transcript import Conversation, ConversationBundle, Message, SourceIssue


class ConversationBuilder:
    """Collects messages and tool calls of one conversation in order."""

    def __init__(self, file: str, format_name: str, key: str) -> None:
        self.file = file
        self.format = format_name
        self.key = key
        self.conversation_id = f"{format_name}:{key}"
        self.messages: list[Message] = []
        self.ledger = CallLedger()
        self.issues: list[SourceIssue] = []
        self.position = 0
        """Where the next message or item stands (history deduplicated)."""
        self.last_message_id: str | None = None
        self.used_ids: set[str] = set()

    def warn(self, item: Located, reason: str) -> None:
        """A warning about ``item``: it is kept, or what is wrong is left out of it."""
        self.issues.append(item.issue(self.file, reason, warning=True))

    def skip(self, item: Located, reason: str) -> None:
        """An issue about ``item``, which is left out."""
        self.issues.append(item.issue(self.file, reason))

    def take_position(self) -> int:
        """The position of the message or item being added; the next one gets the next."""
        position = self.position
        self.position += 1
        return position

    def source_id_once(self, item: Located, own_id: str | None, position: int, what: str) -> str:
        """``<conversation>:<own id>``, or ``<conversation>:<position>`` when there is no
        own id or it was used before (a warning names the ``what``, e.g. ``message id``)."""
        if own_id is not None and f"{self.conversation_id}:{own_id}" in self.used_ids:
            self.warn(item, f"{what} {own_id} appears twice; the copy is kept by position")
            own_id = None
        source_id = f"{self.conversation_id}:{own_id or position}"
        self.used_ids.add(source_id)
        return source_id

    def bundle(
        self, exchanges: int, model: str | None, times: Sequence[datetime]
    ) -> ConversationBundle:
        """The conversation collected from ``exchanges`` exchanges, with what was found."""
        conversation = Conversation(
            conversation_id=self.conversation_id,
            format=self.format,
            external_id=self.key,
            model=model,
            started_at=min(times) if times else None,
            ended_at=max(times) if times else None,
            attributes={"exchanges": exchanges} if exchanges > 1 else {},
        )
        return ConversationBundle(
            conversation=conversation,
            messages=tuple(self.messages),
            tool_calls=self.ledger.tool_calls(),
            issues=tuple(self.issues),
            origin=self.file,
        )
