"""Adapters for external transcript formats, detection by content, and redaction.

The registry order is the detection order: specific formats first, generic message
lists last, so a Claude Code log (whose lines embed Anthropic messages) is never taken
for a plain Anthropic list.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from proctor.errors import ConfigError
from proctor.sources._detect import Plan, detect, plan_import, read_unit, walk
from proctor.sources._files import iter_jsonl, load_json_document, open_binary
from proctor.sources._prepare import Limits, bound_text, prepare_bundle
from proctor.sources._redaction import Redactor
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
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
    "Limits",
    "LocomoAdapter",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "OtelAdapter",
    "Plan",
    "ProctorJsonlAdapter",
    "RJudgeAdapter",
    "ReadItem",
    "ReadUnit",
    "Redactor",
    "Sample",
    "SourceAdapter",
    "WhoAndWhenAdapter",
    "adapter_named",
    "bound_text",
    "default_adapters",
    "detect",
    "iter_jsonl",
    "load_json_document",
    "open_binary",
    "plan_import",
    "prepare_bundle",
    "read_paths",
    "read_unit",
    "walk",
]
