"""Helpers for adapter tests: read a path with one adapter and split bundles from issues."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.sources import adapter_named, read_paths
from proctor.transcript import ConversationBundle, SourceIssue


@dataclass
class ReadResult:
    """Everything an adapter produced for some paths."""

    bundles: list[ConversationBundle] = field(default_factory=list)
    issues: list[SourceIssue] = field(default_factory=list)

    @property
    def messages(self) -> int:
        """Messages over all bundles."""
        return sum(len(b.messages) for b in self.bundles)

    @property
    def tool_calls(self) -> int:
        """Tool calls over all bundles."""
        return sum(len(b.tool_calls) for b in self.bundles)

    @property
    def subagents(self) -> int:
        """Bundles that are sub-agent runs."""
        return sum(1 for b in self.bundles if b.subagent_run is not None)

    def errors(self) -> list[SourceIssue]:
        """Issues of severity error, standalone or attached to a conversation."""
        attached = [i for b in self.bundles for i in b.issues]
        return [i for i in [*self.issues, *attached] if i.severity == "error"]


def read(*paths: Path | str, format_name: str | None = None) -> ReadResult:
    """Read ``paths`` with detection (or the named adapter) and collect the output."""
    result = ReadResult()
    for item in read_paths(list(paths), format_name=format_name):
        if isinstance(item, SourceIssue):
            result.issues.append(item)
        else:
            result.bundles.append(item)
    return result


def detected_format(path: Path) -> str | None:
    """The adapter name detection picks for ``path``."""
    from proctor.sources import Sample, default_adapters, detect

    adapter = detect(Sample(path), default_adapters())
    return None if adapter is None else adapter.name


def all_errors(result: ReadResult) -> list[SourceIssue]:
    """Error issues, standalone or attached to a conversation."""
    return result.errors()


def produced_strings(bundles: list[ConversationBundle]) -> list[str]:
    """Every string anywhere in the bundles: ids, texts, arguments, attributes, issues."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    for bundle in bundles:
        walk(dataclasses.astuple(bundle))
    return found


def write_json(path: Path, value: Any) -> Path:
    """Write ``value`` as an indented JSON document and return the path."""
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1))
    return path


__all__ = [
    "ReadResult",
    "adapter_named",
    "all_errors",
    "detected_format",
    "produced_strings",
    "read",
    "write_json",
]
