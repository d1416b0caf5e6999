"""Claude Code session logs (JSONL) and their sub-agent files."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class ClaudeCodeAdapter(SourceAdapter):
    """Claude Code session logs (JSONL) and their sub-agent files."""

    name = "claude_code"
    description = "Claude Code session logs (JSONL) and their sub-agent files."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
