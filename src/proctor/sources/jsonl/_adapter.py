"""Proctor's own JSON Lines event format (docs/proctor-jsonl.md)."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class ProctorJsonlAdapter(SourceAdapter):
    """Proctor's own JSON Lines event format (docs/proctor-jsonl.md)."""

    name = "proctor_jsonl"
    description = "Proctor's own JSON Lines event format (docs/proctor-jsonl.md)."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
