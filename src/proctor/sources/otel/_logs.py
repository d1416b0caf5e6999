"""Model calls recorded as log events rather than span attributes.

Deprecated GenAI message events and the current
``gen_ai.client.inference.operation.details`` event are log records naming the span
they belong to. The events of one span are read as one model call; when the span is
in the same file, its node is completed with them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from proctor.sources.otel._legacy import CHOICE_EVENT, EVENT_ROLES, turn_from_event
from proctor.sources.otel._operations import (
    SpanNode,
    call_metadata,
    conversation_key_of,
    read_exchange,
    text_value,
)
from proctor.sources.otel._otlp import LogRecord
from proctor.sources.otel._turns import Turn

DETAILS_EVENT = "gen_ai.client.inference.operation.details"


def nodes_from_logs(records: Iterable[LogRecord]) -> list[SpanNode]:
    """Model calls recorded as log events, one node per span the events name.

    Events that name no span are grouped by the batch they were exported in, and keyed
    by a digest of their content so the key is stable on re-read.
    """
    groups: dict[tuple[str, str] | str, list[LogRecord]] = {}
    seen: set[str] = set()
    for record in records:
        name = record.event_name or ""
        if not (name in EVENT_ROLES or name in (CHOICE_EVENT, DETAILS_EVENT)):
            continue
        key = (
            (record.trace_id, record.span_id)
            if record.trace_id and record.span_id
            else record.batch
        )
        # An exporter that retries writes the same record twice; keep it once.
        identity = repr((key, name, record.time, record.body, sorted(record.attributes.items())))
        if identity in seen:
            continue
        seen.add(identity)
        groups.setdefault(key, []).append(record)
    nodes: list[SpanNode] = []
    for key, group in groups.items():
        if isinstance(key, tuple):
            trace_id, span_id = key
        else:
            digest = _digest_records(group)
            trace_id, span_id = f"logs-{digest}", digest[:16]
        nodes.append(_log_node(trace_id, span_id, group))
    return nodes


def _log_node(trace_id: str, span_id: str, group: list[LogRecord]) -> SpanNode:
    inputs: list[Turn] = []
    outputs: list[Turn] = []
    problems: list[str] = []
    attributes: dict[str, Any] = {}
    for record in group:
        attributes.update(record.attributes)
        if record.event_name == DETAILS_EVENT:
            details, found = read_exchange(record.attributes)
            inputs.extend(details.inputs)
            outputs.extend(details.outputs)
            problems.extend(found)
            continue
        found_turn = turn_from_event(record.event_name or "", record.body)
        if found_turn is not None and found_turn[0] is not None:
            (outputs if found_turn[1] else inputs).append(found_turn[0])
    metadata = call_metadata(attributes)
    times = [r.time for r in group if r.time is not None]
    service = group[0].resource.get("service.name")
    return SpanNode(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=None,
        name="gen_ai events",
        started_at=min(times, default=None),
        ended_at=max(times, default=None),
        conversation_key=conversation_key_of(attributes),
        error=text_value(attributes.get("error.type")),
        service=service if isinstance(service, str) else None,
        genai=True,
        exchange=replace(metadata, inputs=tuple(inputs), outputs=tuple(outputs)),
        problems=tuple(problems),
    )


def _digest_records(group: list[LogRecord]) -> str:
    first = group[0]
    seed = repr((first.event_name, first.time, first.body))
    return hashlib.blake2b(seed.encode(), digest_size=16).hexdigest()


def merge_log_node(span: SpanNode, events: SpanNode) -> SpanNode:
    """A span completed with the messages its log events recorded."""
    if span.exchange is not None and span.exchange.has_content:
        return span
    base = span.exchange or events.exchange
    assert base is not None and events.exchange is not None
    exchange = replace(base, inputs=events.exchange.inputs, outputs=events.exchange.outputs)
    return replace(span, exchange=exchange, genai=True, problems=span.problems + events.problems)
