"""OpenAI Responses API item lists, requests and responses (research §5.2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from proctor.sources._common import Exchange, Record
from proctor.sources._exchange_log import ExchangeLogAdapter
from proctor.sources.openai_responses._convert import FORMAT, build_bundle
from proctor.sources.openai_responses._shapes import (
    exchanges_from_records,
    looks_like_responses,
    looks_like_responses_lines,
)
from proctor.transcript import ConversationBundle, SourceIssue


class OpenAIResponsesAdapter(ExchangeLogAdapter):
    """OpenAI Responses item lists, requests, response objects and logged pairs.

    ``reasoning`` items (summaries, content, ``encrypted_content``) are dropped unread;
    only reasoning token counts are kept. Responses chained by ``previous_response_id``
    form one conversation. Codex CLI rollouts, whose payloads are Responses items, belong
    to the Codex adapter and are not recognised here.
    """

    name = FORMAT
    description = "OpenAI Responses API input/output item lists."

    def looks_like_document(self, document: Any) -> bool:
        """True for a whole-file document in this format."""
        return looks_like_responses(document)

    def looks_like_lines(self, records: list[dict[str, Any]]) -> bool:
        """True for sampled JSON Lines records in this format."""
        return looks_like_responses_lines(records)

    def exchanges(self, records: list[Record], file: str) -> Iterable[Exchange | SourceIssue]:
        """Requests and responses found in the records."""
        return exchanges_from_records(records, file)

    def bundle(self, group: list[Exchange], file: str) -> ConversationBundle:
        """One conversation from a group of exchanges."""
        return build_bundle(group, file)
