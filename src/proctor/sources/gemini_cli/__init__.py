"""Gemini CLI chat logs: legacy JSON and the replayed JSONL."""

from proctor.sources.gemini_cli._adapter import GeminiCliAdapter

__all__ = ["GeminiCliAdapter"]
