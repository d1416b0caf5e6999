"""Claude Code session logs (JSONL) and their sub-agent files."""

from proctor.sources.claude_code._adapter import ClaudeCodeAdapter

__all__ = ["ClaudeCodeAdapter"]
