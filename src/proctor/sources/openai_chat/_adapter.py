"""OpenAI Chat Completions message lists, requests and responses."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class OpenAIChatAdapter(SourceAdapter):
    """OpenAI Chat Completions message lists, requests and responses."""

    name = "openai_chat"
    description = "OpenAI Chat Completions message lists, requests and responses."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
