"""The shared shape of provider request/response log adapters.

OpenAI Chat Completions, OpenAI Responses and Anthropic Messages logs are read the same
way: records (a document or JSON Lines) → exchanges (one request and/or response) →
groups of exchanges whose histories extend each other → one conversation per group.
Each format supplies only its recognisers, its exchange parser and its bundle builder.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from proctor.sources._common import (
    Exchange,
    Record,
    group_exchanges,
    is_json_lines,
    iter_records,
    sample_document,
)
from proctor.sources._files import iter_jsonl
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.transcript import ConversationBundle, SourceIssue

SALVAGE_LINES = 200
"""Lines of a damaged, unrecognised file looked at for a record of the format (``salvage``)."""


class ExchangeLogAdapter(SourceAdapter):
    """Base of the adapters for logged provider requests and responses."""

    @abstractmethod
    def looks_like_document(self, document: Any) -> bool:
        """True when a whole-file JSON document is in this format."""

    @abstractmethod
    def looks_like_lines(self, records: list[dict[str, Any]]) -> bool:
        """True when sampled JSON Lines records are in this format."""

    @abstractmethod
    def exchanges(self, records: list[Record], file: str) -> Iterable[Exchange | SourceIssue]:
        """Turn records into exchanges, with issues for records that are not."""

    @abstractmethod
    def bundle(self, group: list[Exchange], file: str) -> ConversationBundle:
        """Build one conversation from a group of exchanges."""

    def sniff(self, sample: Sample) -> bool:
        """True for a document or JSON Lines in this format."""
        if is_json_lines(sample):
            return self.looks_like_lines(sample.records)
        return self.looks_like_document(sample_document(sample))

    def salvage(self, sample: Sample) -> bool:
        """True when a record among the file's first lines is in this format on its own: a
        broken line and a line of another shape (a damaged record's remains) must not hide
        the good records after them."""
        if not is_json_lines(sample):
            return False
        return any(
            self.looks_like_lines([item[1]])
            for item in islice(iter_jsonl(sample.path), SALVAGE_LINES)
            if not isinstance(item, SourceIssue)
        )

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
        for found in self.exchanges(records, file):
            if isinstance(found, Exchange):
                exchanges.append(found)
            else:
                yield found
        for group in group_exchanges(exchanges):
            yield self.bundle(group, file)
