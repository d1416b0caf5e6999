"""OpenAI Chat Completions message lists, requests and responses (research §5.1).

Streaming chunk files (``chat.completion.chunk`` with ``choices[].delta``) are out of
scope: they are not recognised, so detection leaves them to other adapters or reports
them as unrecognised.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any

from proctor.sources._common import Exchange, Record, is_json_lines
from proctor.sources._exchange_log import ExchangeLogAdapter
from proctor.sources._files import iter_jsonl
from proctor.sources._source import Sample
from proctor.sources.openai_chat._convert import FORMAT, build_bundle
from proctor.sources.openai_chat._shapes import (
    exchanges_from_records,
    looks_like_chat,
    looks_like_chat_lines,
    only_damaged,
)
from proctor.transcript import ConversationBundle, SourceIssue

FURTHER_LINES = 200
"""Lines read past the sample when every sampled record is damaged (``sniff``)."""


class OpenAIChatAdapter(ExchangeLogAdapter):
    """OpenAI Chat Completions message lists, requests, responses and logged pairs.

    A file may hold one conversation (a message list, a request, a response) or many (a
    JSON array or JSON Lines of requests and responses). Logged requests repeat the
    history; each message is imported once per conversation.
    """

    name = FORMAT
    description = "OpenAI Chat Completions message lists, requests and responses."

    def sniff(self, sample: Sample) -> bool:
        """True for a document or JSON Lines in this format, also when every record of
        the sample is damaged (its first lines hold a huge value, NaN where text
        belongs …) and a later line is a chat record: otherwise the whole file would be
        left alone unread, its good records with it, and nothing said about it."""
        if super().sniff(sample):
            return True
        if not is_json_lines(sample) or not only_damaged(sample.records):
            return False
        records = [
            item[1]
            for item in islice(iter_jsonl(sample.path), FURTHER_LINES)
            if not isinstance(item, SourceIssue)
        ]
        return looks_like_chat_lines(records)

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
