"""OpenAI Chat Completions message lists, requests and responses (research §5.1).

Streaming chunk files (``chat.completion.chunk`` with ``choices[].delta``) are out of
scope: they are not recognised, so detection leaves them to other adapters or reports
them as unrecognised.
"""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._common import (
    Exchange,
    Record,
    group_exchanges,
    is_json_lines,
    iter_records,
    sample_document,
)
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.openai_chat._convert import FORMAT, build_bundle
from proctor.sources.openai_chat._shapes import (
    exchanges_from_records,
    looks_like_chat,
    looks_like_chat_lines,
)
from proctor.transcript import SourceIssue


class OpenAIChatAdapter(SourceAdapter):
    """OpenAI Chat Completions message lists, requests, responses and logged pairs.

    A file may hold one conversation (a message list, a request, a response) or many (a
    JSON array or JSON Lines of requests and responses). Logged requests repeat the
    history; each message is imported once per conversation.
    """

    name = FORMAT
    description = "OpenAI Chat Completions message lists, requests and responses."

    def sniff(self, sample: Sample) -> bool:
        """True for chat messages, requests, responses or pairs (documents or JSON Lines)."""
        if is_json_lines(sample):
            return looks_like_chat_lines(sample.records)
        return looks_like_chat(sample_document(sample))

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield one bundle per conversation found in the file, and issues for bad records."""
        file = str(unit.path)
        records: list[Record] = []
        for item in iter_records(unit):
            if isinstance(item, SourceIssue):
                yield item
            else:
                records.append(item)
        exchanges: list[Exchange] = []
        for found in exchanges_from_records(records, file):
            if isinstance(found, Exchange):
                exchanges.append(found)
            else:
                yield found
        for group in group_exchanges(exchanges):
            yield build_bundle(group, file)
