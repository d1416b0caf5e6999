"""Evidence for loop findings: the repeated call and the error line it kept returning."""

from __future__ import annotations

import re
from functools import lru_cache

from proctor.findings import Evidence
from proctor.rules._evidence import cite_result
from proctor.rules.builtin._spans import cite_command
from proctor.transcript import ToolCall

_ERROR_WORDS = re.compile(
    r"error|exception|failed|failure|fatal|refused|denied|not found|no such|cannot|can't"
    r"|unable|timed? ?out|invalid|missing",
    re.IGNORECASE,
)
_STACK_FRAME = re.compile(r"^\s*(at |File \"|\^|~|\d+\s*\||Traceback)")
# A line that names the error (`sqlite3.OperationalError: …`, `Error: connect …`, `fatal: …`)
# says more than one that only mentions it (`code: 'ECONNREFUSED'`).
_HEADLINE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception)\b|error\b|fatal\b|FAIL(?:ED)?\b|E\s)", re.IGNORECASE
)


def cite_action(call: ToolCall) -> Evidence:
    """The repeated call, pointing at its command or arguments."""
    return cite_command(call)


@lru_cache(maxsize=256)  # a loop keeps returning the very same error text
def _error_span(text: str) -> tuple[int, int] | None:
    """Range of the line that best says what went wrong (the last error-like line)."""
    best: tuple[int, int] | None = None
    best_rank = 0
    position = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and _ERROR_WORDS.search(stripped) and not _STACK_FRAME.match(line):
            rank = 2 if _HEADLINE.match(line) else 1
            if rank >= best_rank:
                start = position + line.index(stripped[0])
                best, best_rank = (start, start + len(stripped)), rank
        position += len(line)
    return best


def error_line(call: ToolCall, limit: int = 120) -> str:
    """The error line of a failed call's result, shortened; empty when none stands out."""
    text = call.result_text or ""
    span = _error_span(text)
    if span is None:
        return ""
    line = text[span[0] : span[1]]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cite_error(call: ToolCall) -> Evidence | None:
    """The error line inside a failed call's result, or None when the result is empty."""
    text = call.result_text or ""
    if not text.strip():
        return None
    span = _error_span(text)
    return cite_result(call) if span is None else cite_result(call, *span)
