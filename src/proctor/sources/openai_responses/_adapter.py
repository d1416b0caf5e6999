"""OpenAI Responses API item lists, requests and responses (research §5.2)."""

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
from proctor.sources.openai_responses._convert import FORMAT, build_bundle
from proctor.sources.openai_responses._shapes import (
    exchanges_from_records,
    looks_like_responses,
    looks_like_responses_lines,
)
from proctor.transcript import SourceIssue


class OpenAIResponsesAdapter(SourceAdapter):
    """OpenAI Responses item lists, requests, response objects and logged pairs.

    ``reasoning`` items (summaries, content, ``encrypted_content``) are dropped unread;
    only reasoning token counts are kept. Responses chained by ``previous_response_id``
    form one conversation. Codex CLI rollouts, whose payloads are Responses items, belong
    to the Codex adapter and are not recognised here.
    """

    name = FORMAT
    description = "OpenAI Responses API input/output item lists."

    def sniff(self, sample: Sample) -> bool:
        """True for Responses items, requests, responses or pairs (documents or JSON Lines)."""
        if is_json_lines(sample):
            return looks_like_responses_lines(sample.records)
        return looks_like_responses(sample_document(sample))

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
