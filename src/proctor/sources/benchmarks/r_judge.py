"""R-Judge benchmark records as conversations."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class RJudgeAdapter(SourceAdapter):
    """R-Judge benchmark records as conversations."""

    name = "r_judge"
    description = "R-Judge benchmark records as conversations."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
