"""OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON.

Reads OTLP/JSON trace exports (``{"resourceSpans": [...]}``) and log exports
(``{"resourceLogs": [...]}``) carrying GenAI events: one export per file, or JSON Lines
with one export per line as the OpenTelemetry Collector's file exporter writes them.
All exports of a file are read together, so spans and the log events that describe
them join up.

The pipeline: ``_otlp`` decodes the wire format; ``_spans`` and ``_logs`` say what each
span did (as ``_operations`` values); ``_scopes`` groups spans into conversations and
sub-agent runs; ``_bundles`` builds the conversations. An export without any GenAI or OpenInference data (the generic OTLP
examples, an HTTP service's traces) imports as nothing, with one warning saying so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.errors import SourceError
from proctor.sources._common import is_json_lines, mostly
from proctor.sources._files import RecordLines, iter_jsonl, load_json_document
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.otel._bundles import build_bundles
from proctor.sources.otel._logs import merge_log_node, nodes_from_logs
from proctor.sources.otel._operations import SpanNode
from proctor.sources.otel._otlp import ExportDecoder, ExportItem, LogRecord, SpanRecord, is_export
from proctor.sources.otel._scopes import SpanRef, assign_scopes, ref_of
from proctor.sources.otel._spans import interpret_span
from proctor.transcript import ConversationBundle, SourceIssue, nesting_problem

_EXPORT_START = re.compile(
    rb'^\s*\{\s*"(?:resourceSpans|resourceLogs|resource_spans|resource_logs)"\s*:'
)
"""An export's first key, recognisable even when the first line is too long to sample."""


_RECORD_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError)
"""What decoding one malformed export can raise: it becomes an issue for that export."""


class OtelAdapter(SourceAdapter):
    """OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."""

    name = "otel"
    description = "OpenTelemetry GenAI and OpenInference spans exported as OTLP JSON."

    def sniff(self, sample: Sample) -> bool:
        """True for OTLP/JSON trace or log exports, as one document or one per line."""
        if sample.is_binary or sample.text_start != "{":
            return False
        if _EXPORT_START.match(sample.head):
            return True
        if sample.records:
            # A collector file may interleave metrics exports with trace and log exports.
            records = sample.records
            keys = frozenset({"resourceSpans", "resourceLogs", "resourceMetrics"})
            return mostly(records, _is_any_export, keys) and any(map(is_export, records))
        return is_export(sample.document)

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield one bundle per conversation found in the file's exports."""
        shown = str(unit.path)
        line_issues: list[SourceIssue] = []
        try:
            exports = read_exports(_documents(unit, line_issues), shown, path=unit.path)
        except SourceError as exc:
            yield SourceIssue(shown, exc.reason, exc.line)
            return
        yield from line_issues
        yield from exports.issues
        if not exports.scopes:
            yield SourceIssue(
                shown,
                "no GenAI or OpenInference spans or events in this export; nothing to import "
                "(enable the GenAI instrumentation, and content capture for messages)",
                severity="warning",
            )
            return
        yield from exports.bundles


@dataclass(frozen=True, slots=True)
class ExportsRead:
    """What a set of OTLP exports held, read together."""

    bundles: list[ConversationBundle]
    """One per conversation, parents first."""
    issues: list[SourceIssue]
    """Records that could not be decoded (errors) or were partly skipped (warnings)."""
    spans: int
    """Spans decoded."""
    spans_used: int
    """Spans that belong to a conversation (GenAI or OpenInference data, or below it)."""
    scopes: int
    """Conversation and sub-agent scopes found (sub-agents without content fold away)."""


def read_exports(
    documents: Iterable[tuple[Any, int | None]], shown: str, *, path: Path | None = None
) -> ExportsRead:
    """Read parsed OTLP/JSON export documents together (a file's, or one HTTP request's).

    Args:
        documents: each export document with its line number (None when not from a line).
        shown: where they came from, named in issues and recorded as the bundles' origin.
        path: the file of a whole-file export, to name the line of a bad resource in it.
    """
    decoder = ExportDecoder(shown)
    items: list[ExportItem] = []
    for document, line in documents:
        document = _within_depth(document, shown, line, path, decoder.issues)
        if document is None:
            continue
        try:
            items.extend(list(decoder.decode(document, line)))
        except _RECORD_ERRORS as exc:
            decoder.issues.append(
                SourceIssue(
                    shown, f"export could not be read ({type(exc).__name__}: {exc}); skipped", line
                )
            )
    scopes = assign_scopes(_nodes(items))
    spans = {(item.trace_id, item.span_id) for item in items if isinstance(item, SpanRecord)}
    used = {ref_of(node) for scope in scopes for node in scope.nodes}
    return ExportsRead(
        bundles=build_bundles(scopes, shown) if scopes else [],
        issues=decoder.issues,
        spans=len(spans),
        spans_used=len(spans & used),
        scopes=len(scopes),
    )


_GROUPS = ("resourceSpans", "resourceLogs", "resource_spans", "resource_logs")


def _within_depth(
    document: Any, shown: str, line: int | None, path: Path | None, issues: list[SourceIssue]
) -> Any:
    """``document`` without the resource groups nested past the record limit (each one
    reported by its line), or None when the export as a whole is too deep."""
    if not isinstance(document, dict):
        return document
    kept = dict(document)
    for key in _GROUPS:
        groups = document.get(key)
        if not isinstance(groups, list):
            continue
        lines = RecordLines(path, key) if path is not None and line is None else None
        kept[key] = []
        for index, group in enumerate(groups):
            problem = nesting_problem(group)
            if problem is None:
                kept[key].append(group)
                continue
            where = lines.of(index) if lines is not None else line
            issues.append(SourceIssue(shown, f"{key}[{index}]: {problem}; skipped", where))
    problem = nesting_problem({k: v for k, v in kept.items() if k not in _GROUPS})
    if problem is not None:
        issues.append(SourceIssue(shown, f"{problem}; export skipped", line))
        return None
    return kept


def _is_any_export(record: dict[str, Any]) -> bool:
    return is_export(record) or isinstance(record.get("resourceMetrics"), list)


def _is_json_lines(unit: ReadUnit) -> bool:
    """True for one export a line (a damaged first line included), or a one-line file."""
    sample = unit.sample if unit.sample is not None else Sample(unit.path)
    head = sample.head.strip()
    if b"\n" not in head:
        return True  # one line: reading it as JSON Lines gives the same document
    if is_json_lines(sample):
        return True
    # Every line damaged: still one export a line (each reported), unless the file is
    # a pretty-printed document (a bare brace on its first line) or parses as one.
    return head.split(b"\n", 1)[0].strip() not in (b"{", b"[") and sample.document is None


def _documents(unit: ReadUnit, issues: list[SourceIssue]) -> Iterator[tuple[Any, int | None]]:
    """Each export document with its line number (None for a single-document file)."""
    if not _is_json_lines(unit):
        # Detection may already have parsed the document; reuse it rather than parse twice.
        cached = unit.sample.document if unit.sample is not None else None
        yield (cached if cached is not None else load_json_document(unit.path)), None
        return
    for item in iter_jsonl(unit.path):
        if isinstance(item, SourceIssue):
            issues.append(item)
        else:
            yield item[1], item[0]


def _nodes(items: list[ExportItem]) -> list[SpanNode]:
    """What every span did, with log events joined to the spans they name."""
    nodes: dict[SpanRef, SpanNode] = {}
    for item in items:
        if isinstance(item, SpanRecord):
            # A span exported twice (collector retries) is read once; the last copy wins.
            node = interpret_span(item)
            nodes[ref_of(node)] = node
    for events in nodes_from_logs(item for item in items if isinstance(item, LogRecord)):
        span = nodes.get(ref_of(events))
        nodes[ref_of(events)] = events if span is None else merge_log_node(span, events)
    return list(nodes.values())
