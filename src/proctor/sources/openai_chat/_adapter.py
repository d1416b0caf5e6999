"""OpenAI Chat Completions message lists, requests and responses (research §5.1).

Streaming chunk files (``chat.completion.chunk`` with ``choices[].delta``) are out of
scope: they are not recognised, so detection leaves them to other adapters or reports
them as unrecognised.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from proctor.sources._common import Exchange, Record
from proctor.sources._exchange_log import ExchangeLogAdapter
from proctor.sources.openai_chat._convert import FORMAT, build_bundle
from proctor.sources.openai_chat._shapes import (
    exchanges_from_records,
    looks_like_chat,
    looks_like_chat_lines,
)
from proctor.transcript import ConversationBundle, SourceIssue


class OpenAIChatAdapter(ExchangeLogAdapter):
    """OpenAI Chat Completions message lists, requests, responses and logged pairs.

    A file may hold one conversation (a message list, a request, a response) or many (a
    JSON array or JSON Lines of requests and responses). Logged requests repeat the
    history; each message is imported once per conversation.
    """

    name = FORMAT
    description = "OpenAI Chat Completions message lists, requests and responses."

    def looks_like_document(self, document: Any) -> bool:
        """True for a whole-file document in this format."""
        return looks_like_chat(document)

    def looks_like_lines(self, records: list[dict[str, Any]]) -> bool:
        """True for sampled JSON Lines records in this format."""
        return looks_like_chat_lines(records)

    def exchanges(self, records: list[Record], file: str) -> Iterable[Exchange | SourceIssue]:
        """Requests and responses found in the records."""
        return exchanges_from_records(records, file)

    def bundle(self, group: list[Exchange], file: str) -> ConversationBundle:
        """One conversation from a group of exchanges."""
        return build_bundle(group, file)
