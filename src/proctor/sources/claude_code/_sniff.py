"""Recognise Claude Code content: session JSONL records or the web ``loglines`` export.

Recognition is by fields, never by file name. A line counts only when it carries the
Claude Code envelope (a ``user``/``assistant`` record wrapping an API ``message`` next to
``uuid``/``sessionId``/``parentUuid``/``isSidechain``) or is a record type only Claude
Code writes; plain Anthropic message lists and other agents' logs have neither.
"""

from __future__ import annotations

import re
from typing import Any

from proctor.sources._source import Sample

_ENVELOPE_KEYS = ("uuid", "sessionId", "parentUuid", "isSidechain")
_OWN_TYPES = frozenset(
    {"file-history-snapshot", "queue-operation", "last-prompt", "custom-title", "ai-title"}
)
_HEAD_KEYS = (
    re.compile(rb'"parentUuid"\s*:'),
    re.compile(rb'"sessionId"\s*:'),
    re.compile(rb'"isSidechain"\s*:'),
)
_HEAD_WINDOW = 4096


def looks_like_claude_code(sample: Sample) -> bool:
    """True when the sample is a Claude Code session log or loglines export."""
    if sample.text_start != "{":
        return False
    if any(is_claude_code_record(record) for record in sample.iter_records()):
        return True
    if not is_single_document(sample):
        return False
    document = sample.document
    if isinstance(document, dict):
        loglines = loglines_of(document)
        if loglines is not None:
            return any(_is_logline(record) for record in loglines[:20])
        return is_claude_code_record(document)
    # A first line longer than any document we would load still shows the envelope.
    window = sample.head[:_HEAD_WINDOW]
    return all(pattern.search(window) for pattern in _HEAD_KEYS)


def is_single_document(sample: Sample) -> bool:
    """True when the file is one JSON document, not JSON Lines.

    Either it is pretty-printed (the first line is a lone ``{``), or its first line is
    longer than the sample, so no line parsed on its own, or it parses as one object.
    """
    first_line = sample.head.lstrip().split(b"\n", 1)[0].strip()
    return first_line == b"{" or not sample.first_records(1) or isinstance(sample.document, dict)


def loglines_of(document: Any) -> list[Any] | None:
    """The records of a web export ``{"loglines": [...]}``, or None for anything else."""
    if isinstance(document, dict):
        loglines = document.get("loglines")
        if isinstance(loglines, list):
            return loglines
    return None


def is_claude_code_record(record: dict[str, Any]) -> bool:
    """True for one record in Claude Code's own shape."""
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if kind in ("user", "assistant"):
        # The envelope: next to an API message, or (a damaged message) most of its keys.
        envelope = sum(key in record for key in _ENVELOPE_KEYS)
        return envelope >= 3 or (isinstance(record.get("message"), dict) and envelope >= 1)
    if kind in _OWN_TYPES:
        return True
    if kind == "summary":
        return "leafUuid" in record
    if kind in ("progress", "system", "attachment"):
        return "uuid" in record and "sessionId" in record
    return False


def _is_logline(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and record.get("type") in ("user", "assistant")
        and isinstance(record.get("message"), dict)
    )
