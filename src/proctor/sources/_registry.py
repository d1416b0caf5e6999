"""The built-in adapters in detection order, and reading paths with them.

Kept apart from the package's ``__init__`` so that code which needs only redaction or a
single adapter (the gate, before every tool call) does not import every format.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from proctor.errors import ConfigError
from proctor.sources._detect import plan_import, read_unit
from proctor.sources._source import SourceAdapter
from proctor.sources.anthropic import AnthropicMessagesAdapter
from proctor.sources.benchmarks import (
    AgentDojoAdapter,
    AgentRxAdapter,
    LocomoAdapter,
    RJudgeAdapter,
    WhoAndWhenAdapter,
)
from proctor.sources.claude_code import ClaudeCodeAdapter
from proctor.sources.codex import CodexAdapter
from proctor.sources.gemini_cli import GeminiCliAdapter
from proctor.sources.jsonl import ProctorJsonlAdapter
from proctor.sources.openai_chat import OpenAIChatAdapter
from proctor.sources.openai_responses import OpenAIResponsesAdapter
from proctor.sources.otel import OtelAdapter
from proctor.transcript import ConversationBundle, SourceIssue


def default_adapters() -> list[SourceAdapter]:
    """Every built-in adapter, in detection order."""
    return [
        ProctorJsonlAdapter(),
        ClaudeCodeAdapter(),
        CodexAdapter(),
        GeminiCliAdapter(),
        OtelAdapter(),
        AgentDojoAdapter(),
        RJudgeAdapter(),
        WhoAndWhenAdapter(),
        AgentRxAdapter(),
        LocomoAdapter(),
        OpenAIResponsesAdapter(),
        AnthropicMessagesAdapter(),
        OpenAIChatAdapter(),
    ]


def adapter_named(name: str) -> SourceAdapter:
    """The built-in adapter called ``name``."""
    for adapter in default_adapters():
        if adapter.name == name:
            return adapter
    names = ", ".join(a.name for a in default_adapters())
    raise ConfigError(f"unknown format {name!r}; choose one of: {names}")


def read_paths(
    paths: Sequence[Path | str],
    *,
    format_name: str | None = None,
    adapters: Sequence[SourceAdapter] | None = None,
) -> Iterator[ConversationBundle | SourceIssue]:
    """Read files or folders into bundles without storing anything (adapter output as is)."""
    plan = plan_import(
        [Path(p) for p in paths], adapters or default_adapters(), format_name=format_name
    )
    yield from plan.issues
    for adapter, unit in plan.units:
        yield from read_unit(adapter, unit)


__all__ = [
    "AgentDojoAdapter",
    "AgentRxAdapter",
    "AnthropicMessagesAdapter",
    "ClaudeCodeAdapter",
    "CodexAdapter",
    "GeminiCliAdapter",
    "LocomoAdapter",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "OtelAdapter",
    "ProctorJsonlAdapter",
    "RJudgeAdapter",
    "WhoAndWhenAdapter",
    "adapter_named",
    "default_adapters",
    "read_paths",
]
