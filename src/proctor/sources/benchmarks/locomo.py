"""LoCoMo benchmark records as conversations."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class LocomoAdapter(SourceAdapter):
    """LoCoMo benchmark records as conversations."""

    name = "locomo"
    description = "LoCoMo benchmark records as conversations."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
