"""Reading one live-intake payload (SPEC ING-7) into conversation bundles, all or nothing.

A payload is validated whole before anything is stored: a Proctor JSONL body with one bad
line, or an OTLP export with one span that cannot be decoded, is refused with every
problem named (line number or JSON path, field, what to send instead). Spans that carry
no GenAI or OpenInference data are not problems: they are counted as dropped.

A ``tool_result`` line may answer a call sent in an earlier request; such results are
returned apart (``late_results``) so the caller can attach them to the stored call.

Lines are read by the same JSON rule as files (``sources.parse_json``: a byte order mark
ignored, nesting past ``MAX_JSON_DEPTH`` refused naming the field), and what a payload
holds is given its stored form here (``sources.fit_bundle``: ids, names, counts), so
the ids the intake looks up are the ids it writes. A payload is answered with a refusal
naming the line and the field, never with a server error: an export that cannot be
decoded for a reason nobody foresaw is refused like a bad one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from proctor.errors import SourceError
from proctor.sources import JSONProblem, fit_bundle, fit_id, parse_json
from proctor.sources.jsonl import (
    SUPPORTED_VERSION,
    Assembler,
    HeaderLine,
    ToolCallLine,
    ToolResultLine,
    conversation_source_id,
    quote_id,
    validate_line,
)
from proctor.sources.otel import read_exports
from proctor.transcript import ConversationBundle, SourceIssue

_SKIPPED = re.compile(r"; (?:span|record) skipped(?= \(|$)")

MAX_PROBLEMS = 50
"""Problems listed in one refusal; a payload with more says how many were left out."""


@dataclass(frozen=True, slots=True)
class PayloadProblem:
    """One reason a payload was refused."""

    reason: str
    line: int | None = None
    """The 1-based line of a JSONL payload, when the problem is on one line."""


class PayloadError(SourceError):
    """A payload was refused; nothing of it was stored. ``problems`` lists every reason."""

    def __init__(self, origin: str, problems: list[PayloadProblem]) -> None:
        self.problems = problems[:MAX_PROBLEMS]
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(
            origin,
            f"{first.reason}{more}; nothing from this request was stored — fix the payload "
            "and send it again",
            line=first.line,
        )


@dataclass(frozen=True, slots=True)
class LateResult:
    """A ``tool_result`` line whose ``tool_call`` came in an earlier request."""

    line: int
    conversation_id: str
    """The Proctor conversation id (``pj:…``), as stored."""
    result: ToolResultLine
    call_source_id: str
    """The source id of the call it answers (``pj:…:call:…``), as stored."""


@dataclass(slots=True)
class IntakeBatch:
    """What one payload holds, ready to be merged into the store."""

    bundles: list[ConversationBundle]
    late_results: list[LateResult] = field(default_factory=list)
    warnings: list[SourceIssue] = field(default_factory=list)
    spans: int = 0
    """OTLP only: spans in the export."""
    spans_dropped: int = 0
    """OTLP only: spans with no GenAI or OpenInference data (not stored, not an error)."""


def parse_events(data: bytes, origin: str) -> IntakeBatch:
    """Validate a Proctor JSONL payload (docs/proctor-jsonl.md) and assemble its bundles.

    Raises:
        PayloadError: any line is not JSON, not an object, or not a valid event.
    """
    problems: list[PayloadProblem] = []
    events: list[tuple[int, Any]] = []
    seen_content = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        first, seen_content = not seen_content, True
        try:
            record = parse_json(raw.strip())
        except JSONProblem as exc:
            reason = exc.reason if exc.position is None else f"not valid JSON ({exc.reason})"
            problems.append(PayloadProblem(reason, number))
            continue
        if not isinstance(record, dict):
            problems.append(PayloadProblem("expected one JSON object per line", number))
            continue
        line, reasons = validate_line(record)
        problems += [PayloadProblem(reason, number) for reason in reasons]
        if isinstance(line, HeaderLine):
            problems += _header_problems(line, number, first)
        elif line is not None:
            events.append((number, line))
    if not problems and not events:
        problems.append(
            PayloadProblem("the payload holds no events; send one JSON event object per line")
        )
    if problems:
        raise PayloadError(origin, problems)
    try:
        return _assemble(events, origin)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as exc:
        # Valid lines that still could not be put together: a bug, but the producer gets
        # an answer that says so, not a server error.
        reason = (
            f"the events could not be assembled ({type(exc).__name__}: {exc}); please report it"
        )
        raise PayloadError(origin, [PayloadProblem(reason)]) from exc


def _header_problems(line: HeaderLine, number: int, first: bool) -> list[PayloadProblem]:
    if not first:
        return [PayloadProblem("a header may only be the first line", number)]
    if line.version != SUPPORTED_VERSION:
        return [
            PayloadProblem(
                f'field "version": version {line.version} is not supported (this Proctor '
                f"reads version {SUPPORTED_VERSION})",
                number,
            )
        ]
    return []


def _assemble(events: list[tuple[int, Any]], origin: str) -> IntakeBatch:
    called = {
        (event.conversation_id, event.call_id)
        for _, event in events
        if isinstance(event, ToolCallLine)
    }
    assembler = Assembler(origin)
    late: list[LateResult] = []
    for number, event in events:
        if isinstance(event, ToolResultLine) and (event.conversation_id, event.call_id) not in (
            called
        ):
            conversation_id = conversation_source_id(event.conversation_id)
            call_id = f"{conversation_id}:call:{quote_id(event.call_id)}"
            late.append(LateResult(number, fit_id(conversation_id), event, fit_id(call_id)))
        else:
            assembler.add(number, event)
    return IntakeBatch(bundles=[fit_bundle(b) for b in assembler.bundles()], late_results=late)


def parse_otlp(document: Any, origin: str) -> IntakeBatch:
    """Read one OTLP/JSON ``ExportTraceServiceRequest`` (or logs request) into bundles.

    Raises:
        PayloadError: the document is not an export, or a span or record cannot be decoded.
    """
    exports = read_exports([(document, None)], origin)
    errors = [issue for issue in exports.issues if issue.severity == "error"]
    if errors:
        # The file reader skips such records; here the whole export is refused instead.
        reasons = [_SKIPPED.sub("", issue.reason) for issue in errors]
        raise PayloadError(origin, [PayloadProblem(reason) for reason in reasons])
    return IntakeBatch(
        bundles=[fit_bundle(b) for b in exports.bundles],
        warnings=[issue for issue in exports.issues if issue.severity == "warning"],
        spans=exports.spans,
        spans_dropped=exports.spans - exports.spans_used,
    )
