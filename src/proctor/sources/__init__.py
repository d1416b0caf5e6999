"""Adapters for external transcript formats, detection by content, and redaction.

The registry order is the detection order: specific formats first, generic message
lists last, so a Claude Code log (whose lines embed Anthropic messages) is never taken
for a plain Anthropic list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proctor._util.lazy import lazy_exports
from proctor.redaction import Redactor
from proctor.sources._detect import Plan, detect, plan_import, read_unit, unreadable_unit, walk
from proctor.sources._files import (
    JSONProblem,
    iter_jsonl,
    load_json_document,
    open_binary,
    parse_json,
)
from proctor.sources._fit import fit_bundle, fit_id
from proctor.sources._prepare import Limits, bound_text, prepare_bundle, prepare_imported_bundle
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter

if TYPE_CHECKING:
    from proctor.sources._registry import (
        AgentDojoAdapter,
        AgentRxAdapter,
        AnthropicMessagesAdapter,
        ClaudeCodeAdapter,
        CodexAdapter,
        GeminiCliAdapter,
        LocomoAdapter,
        OpenAIChatAdapter,
        OpenAIResponsesAdapter,
        OtelAdapter,
        ProctorJsonlAdapter,
        RJudgeAdapter,
        WhoAndWhenAdapter,
        adapter_named,
        default_adapters,
        read_paths,
    )

# Adapters and the registry load on first use (PEP 562): importing ``proctor.sources``
# for redaction or one adapter must not import every format.
_LAZY = frozenset(
    {
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
    }
)


__getattr__ = lazy_exports(__name__, dict.fromkeys(_LAZY, "_registry"), globals())


__all__ = [
    "AgentDojoAdapter",
    "AgentRxAdapter",
    "AnthropicMessagesAdapter",
    "ClaudeCodeAdapter",
    "CodexAdapter",
    "GeminiCliAdapter",
    "JSONProblem",
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
    "fit_bundle",
    "fit_id",
    "iter_jsonl",
    "load_json_document",
    "open_binary",
    "parse_json",
    "plan_import",
    "prepare_bundle",
    "prepare_imported_bundle",
    "read_paths",
    "read_unit",
    "unreadable_unit",
    "walk",
]
