"""Anthropic Messages API message lists, requests and responses (research §5.3)."""

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
from proctor.sources.anthropic._convert import FORMAT, build_bundle
from proctor.sources.anthropic._shapes import (
    exchanges_from_records,
    looks_like_anthropic,
    looks_like_anthropic_lines,
)
from proctor.transcript import SourceIssue


class AnthropicMessagesAdapter(SourceAdapter):
    """Anthropic Messages lists, ``{system, messages}`` requests, responses and logged pairs.

    A file may hold one conversation or many (a JSON array or JSON Lines of requests and
    responses). Logged requests repeat the history; each message is imported once per
    conversation. Claude Code session logs, whose lines embed Anthropic messages, belong
    to the Claude Code adapter and are not recognised here.
    """

    name = FORMAT
    description = "Anthropic Messages API message lists, requests and responses."

    def sniff(self, sample: Sample) -> bool:
        """True for Anthropic messages, requests, responses or pairs with Anthropic specifics."""
        if is_json_lines(sample):
            return looks_like_anthropic_lines(sample.records)
        return looks_like_anthropic(sample_document(sample))

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
