"""Gemini CLI chat logs: legacy JSON and the replayed JSONL."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class GeminiCliAdapter(SourceAdapter):
    """Gemini CLI chat logs: legacy JSON and the replayed JSONL."""

    name = "gemini_cli"
    description = "Gemini CLI chat logs: legacy JSON and the replayed JSONL."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
