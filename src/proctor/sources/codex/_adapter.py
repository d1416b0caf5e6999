"""OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed)."""

from __future__ import annotations

from collections.abc import Iterator

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter


class CodexAdapter(SourceAdapter):
    """OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed)."""

    name = "codex"
    description = "OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed)."

    def sniff(self, sample: Sample) -> bool:
        """Not implemented yet: recognises nothing."""
        return False

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Not implemented yet."""
        return iter(())
