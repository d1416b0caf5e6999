"""OpenAI Responses API input/output item lists."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class OpenAIResponsesAdapter(SourceAdapter):
    """OpenAI Responses API input/output item lists."""

    name = "openai_responses"
    description = "OpenAI Responses API input/output item lists."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
