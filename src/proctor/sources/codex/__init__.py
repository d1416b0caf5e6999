"""OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed)."""

from proctor.sources.codex._adapter import CodexAdapter

__all__ = ["CodexAdapter"]
