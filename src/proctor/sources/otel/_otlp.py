"""Decoding OTLP/JSON exports into plain span and log records.

OTLP/JSON is protobuf's JSON mapping with OpenTelemetry's own rules: trace and span ids
are hex strings (a generic protobuf-to-JSON conversion writes base64 instead, so both
are accepted and normalised to lowercase hex), 64-bit numbers such as ``*UnixNano`` and
``intValue`` are strings, and attribute values are typed wrappers
(``stringValue | intValue | doubleValue | boolValue | arrayValue | kvlistValue |
bytesValue``). Field names are lowerCamelCase, but protobuf parsers also accept the
original snake_case names, so both are read.

This module owns the wire details only. It yields ``SpanRecord`` and ``LogRecord``
values with decoded attributes and reports records it cannot read as issues naming the
record's JSON path, so the GenAI interpretation never sees the encoding; an attribute
whose name looks like a damaged message attribute is reported too (``_attribute_names``),
as no reader would take its message.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from proctor.sources.otel._attribute_names import unread_names
from proctor.transcript import SourceIssue

StatusCode = Literal["unset", "ok", "error"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")
_MAX_NANOS = 253_402_300_800 * 10**9
"""Nanoseconds from the epoch to year 10000: later times are not times."""

_STATUS_CODES: dict[object, StatusCode] = {
    0: "unset",
    1: "ok",
    2: "error",
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
    "UNSET": "unset",
    "OK": "ok",
    "ERROR": "error",
}
_TRACE_ID_BYTES = 16
_SPAN_ID_BYTES = 8


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event recorded on a span (``exception``, deprecated ``gen_ai.*`` events)."""

    name: str
    time: datetime | None
    attributes: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span with decoded ids, times and attributes."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    started_at: datetime | None
    ended_at: datetime | None
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...]
    status: StatusCode
    status_message: str | None
    resource: Mapping[str, Any]
    """Attributes of the resource that produced the span (``service.name`` …)."""


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One log record (a GenAI event when ``event_name`` says so)."""

    trace_id: str | None
    span_id: str | None
    event_name: str | None
    time: datetime | None
    attributes: Mapping[str, Any]
    body: Any
    resource: Mapping[str, Any]
    batch: str
    """The ``scopeLogs`` batch the record came in; groups records that name no span."""


ExportItem = SpanRecord | LogRecord


def is_export(document: object) -> bool:
    """True for an OTLP trace or log export document."""
    if not isinstance(document, dict):
        return False
    return any(
        isinstance(document.get(key), list)
        for key in ("resourceSpans", "resource_spans", "resourceLogs", "resource_logs")
    )


def _get(mapping: Mapping[str, Any], name: str) -> Any:
    """A field by its lowerCamelCase name, or by the snake_case name protobuf also allows."""
    if name in mapping:
        return mapping[name]
    return mapping.get(_CAMEL_HUMP.sub("_", name).lower())


def _objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def decode_value(value: Any) -> Any:
    """The Python value of an OTLP ``AnyValue``; raises ``ValueError`` when malformed.

    ``bytesValue`` becomes a short placeholder: raw bytes are never kept (SPEC ING-5).
    """
    if not isinstance(value, dict):
        raise ValueError("expected a typed value object such as {stringValue: ...}")
    if not value:
        return None
    for name in ("stringValue", "boolValue", "intValue", "doubleValue"):
        inner = _get(value, name)
        if inner is None:
            continue
        if name == "stringValue":
            return str(inner)
        if name == "boolValue":
            if not isinstance(inner, bool):
                raise ValueError(f"boolValue {inner!r} is not true or false")
            return inner
        if name == "intValue":
            return int(inner)
        return float(inner)
    array = _get(value, "arrayValue")
    if array is not None:
        values = array.get("values", []) if isinstance(array, dict) else None
        if not isinstance(values, list):
            raise ValueError("arrayValue has no values list")
        return [decode_value(item) for item in values]
    kvlist = _get(value, "kvlistValue")
    if kvlist is not None:
        values = kvlist.get("values", []) if isinstance(kvlist, dict) else None
        if not isinstance(values, list):
            raise ValueError("kvlistValue has no values list")
        return decode_attributes(values)[0]
    raw = _get(value, "bytesValue")
    if raw is not None:
        size = len(base64.b64decode(str(raw) + "==", validate=False))
        return f"[bytes: {size} bytes]"
    raise ValueError(f"unknown value type {', '.join(sorted(value))}")


def decode_attributes(entries: Any) -> tuple[dict[str, Any], list[str]]:
    """Attributes as a dict, plus a description of each entry that could not be decoded."""
    attributes: dict[str, Any] = {}
    problems: list[str] = []
    if not isinstance(entries, list):
        return attributes, ([] if entries is None else ["attributes is not a list"])
    for entry in entries:
        key = entry.get("key") if isinstance(entry, dict) else None
        if not isinstance(key, str):
            problems.append("an attribute has no string key")
            continue
        try:
            attributes[key] = decode_value(entry.get("value", {}))
        except (ValueError, TypeError, binascii.Error) as exc:
            problems.append(f'attribute "{key}": {exc}')
    return attributes, problems


def normalise_id(value: Any, size: int) -> str | None:
    """Lowercase hex of a ``size``-byte id written as hex or base64; None when absent.

    Raises ``ValueError`` for a value that is neither. All-zero ids mean "no id" in OTLP.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"id {value!r} is not a string")
    if len(value) == size * 2 and _HEX.match(value):
        hex_id = value.lower()
    else:
        try:
            raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except binascii.Error:
            raise ValueError(f'id "{value}" is neither hex nor base64') from None
        if len(raw) != size:
            raise ValueError(f'id "{value}" is not {size} bytes long')
        hex_id = raw.hex()
    return None if hex_id.strip("0") == "" else hex_id


def nanos_to_time(value: Any) -> datetime | None:
    """An aware UTC time from ``*UnixNano`` (a string or a number); None for 0, absent, or
    past what a calendar holds (year 10000 and later)."""
    if value is None or value == "":
        return None
    try:
        nanos = int(value)
    except OverflowError:  # an infinite float
        return None
    if nanos <= 0 or nanos >= _MAX_NANOS:
        return None
    return _EPOCH + timedelta(microseconds=nanos // 1000)


def _status_code(code: Any) -> StatusCode:
    """A span status code (a number or its name); ``unset`` for anything else."""
    return _STATUS_CODES.get(code, "unset") if isinstance(code, int | str) else "unset"


class ExportDecoder:
    """Decodes export documents from one file, collecting issues instead of raising."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[SourceIssue] = []

    def decode(self, document: Any, line: int | None = None) -> Iterator[ExportItem]:
        """Yield the spans and log records of one export document."""
        if not is_export(document):
            if isinstance(document, dict) and _get(document, "resourceMetrics") is not None:
                self._report(
                    "metrics export; Proctor imports traces and logs only", line, "warning"
                )
            else:
                self._report("not an OTLP export (no resourceSpans or resourceLogs); skipped", line)
            return
        for r_index, resource_spans in enumerate(_objects(_get(document, "resourceSpans"))):
            resource = self._resource(resource_spans, f"resourceSpans[{r_index}]", line)
            for s_index, scope in enumerate(_objects(_get(resource_spans, "scopeSpans"))):
                spans = _get(scope, "spans")
                for index, span in enumerate(spans if isinstance(spans, list) else []):
                    where = f"resourceSpans[{r_index}].scopeSpans[{s_index}].spans[{index}]"
                    record = self._span(span, resource, where, line)
                    if record is not None:
                        yield record
        for r_index, resource_logs in enumerate(_objects(_get(document, "resourceLogs"))):
            resource = self._resource(resource_logs, f"resourceLogs[{r_index}]", line)
            for s_index, scope in enumerate(_objects(_get(resource_logs, "scopeLogs"))):
                records = _get(scope, "logRecords")
                for index, log in enumerate(records if isinstance(records, list) else []):
                    where = f"resourceLogs[{r_index}].scopeLogs[{s_index}].logRecords[{index}]"
                    log_record = self._log(log, resource, where, line)
                    if log_record is not None:
                        yield log_record

    def _report(self, reason: str, line: int | None, severity: str = "error") -> None:
        self.issues.append(
            SourceIssue(self.path, reason, line, "warning" if severity == "warning" else "error")
        )

    def _attributes(
        self, holder: Mapping[str, Any], where: str, line: int | None
    ) -> dict[str, Any]:
        attributes, problems = decode_attributes(holder.get("attributes"))
        for problem in problems:
            self._report(f"{where}: {problem}; attribute skipped", line, "warning")
        for problem in unread_names(attributes):
            self._report(f"{where}: {problem}", line, "warning")
        return attributes

    def _resource(self, holder: Mapping[str, Any], where: str, line: int | None) -> dict[str, Any]:
        resource = holder.get("resource")
        if not isinstance(resource, dict):
            return {}
        return self._attributes(resource, f"{where}.resource", line)

    def _span(
        self, span: Any, resource: Mapping[str, Any], where: str, line: int | None
    ) -> SpanRecord | None:
        if not isinstance(span, dict):
            self._report(f"{where}: expected a span object; span skipped", line)
            return None
        try:
            trace_id = normalise_id(_get(span, "traceId"), _TRACE_ID_BYTES)
            span_id = normalise_id(_get(span, "spanId"), _SPAN_ID_BYTES)
            parent_span_id = normalise_id(_get(span, "parentSpanId"), _SPAN_ID_BYTES)
            started_at = nanos_to_time(_get(span, "startTimeUnixNano"))
            ended_at = nanos_to_time(_get(span, "endTimeUnixNano"))
        except (ValueError, TypeError) as exc:
            self._report(f"{where}: {exc}; span skipped", line)
            return None
        if trace_id is None or span_id is None:
            missing = "traceId" if trace_id is None else "spanId"
            self._report(f"{where}: no {missing}; span skipped (every span needs one)", line)
            return None
        status = _get(span, "status")
        status = status if isinstance(status, dict) else {}
        message = status.get("message")
        return SpanRecord(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=parent_span_id,
            name=str(span.get("name") or ""),
            started_at=started_at,
            ended_at=ended_at,
            attributes=self._attributes(span, where, line),
            events=tuple(self._span_events(span, where, line)),
            status=_status_code(status.get("code", 0)),
            status_message=message if isinstance(message, str) and message else None,
            resource=resource,
        )

    def _span_events(
        self, span: Mapping[str, Any], where: str, line: int | None
    ) -> list[SpanEvent]:
        events: list[SpanEvent] = []
        for index, event in enumerate(_objects(span.get("events"))):
            try:
                time = nanos_to_time(_get(event, "timeUnixNano"))
            except ValueError:
                time = None
            attributes = self._attributes(event, f"{where}.events[{index}]", line)
            events.append(SpanEvent(str(event.get("name") or ""), time, attributes))
        return events

    def _log(
        self, log: Any, resource: Mapping[str, Any], where: str, line: int | None
    ) -> LogRecord | None:
        if not isinstance(log, dict):
            self._report(f"{where}: expected a log record object; record skipped", line)
            return None
        try:
            trace_id = normalise_id(_get(log, "traceId"), _TRACE_ID_BYTES)
            span_id = normalise_id(_get(log, "spanId"), _SPAN_ID_BYTES)
            time = nanos_to_time(_get(log, "timeUnixNano")) or nanos_to_time(
                _get(log, "observedTimeUnixNano")
            )
        except (ValueError, TypeError) as exc:
            self._report(f"{where}: {exc}; record skipped", line)
            return None
        attributes = self._attributes(log, where, line)
        body: Any = None
        if "body" in log:
            try:
                body = decode_value(log["body"])
            except (ValueError, TypeError, binascii.Error) as exc:
                self._report(f"{where}: body: {exc}; body skipped", line, "warning")
        event_name = _get(log, "eventName") or attributes.get("event.name")
        return LogRecord(
            trace_id=trace_id,
            span_id=span_id,
            event_name=event_name if isinstance(event_name, str) and event_name else None,
            time=time,
            attributes=attributes,
            body=body,
            resource=resource,
            batch=f"{line}:{where.rsplit('.', 1)[0]}",
        )
