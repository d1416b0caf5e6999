"""Tool calls of one conversation: requests paired with executions and results.

A tool call is seen up to three times: requested in an assistant message (a
``tool_call`` part), run by the application (an ``execute_tool`` or OpenInference TOOL
span) and handed back to the model (a ``tool_call_response`` part in a later call's
history). The three are joined by the call id (``gen_ai.tool.call.id``,
``tool_call.id``). An execution span without a call id is joined to the earliest
unexecuted request of the same tool made before it started; failing that it stands
alone under ``otel:<traceId>:<spanId>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from proctor.sources.otel._operations import SpanNode, ToolExecution
from proctor.sources.otel._turns import ToolRequest, ToolResponse
from proctor.transcript import JSONValue, ToolCall, ToolStatus


@dataclass(slots=True)
class _Draft:
    source_id: str
    name: str
    arguments: JSONValue
    call_id: str | None
    message_source_id: str | None
    created_at: datetime | None
    result_text: str | None = None
    completed_at: datetime | None = None
    execution: SpanNode | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


class ToolCallBook:
    """Collects one conversation's tool calls in the order they were requested."""

    def __init__(self, id_prefix: str) -> None:
        self._prefix = id_prefix
        self._drafts: dict[str, _Draft] = {}
        self._by_call_id: dict[str, _Draft] = {}
        self.by_span: dict[tuple[str, str], str] = {}
        """Source id of the call each execution span completed."""

    def _source_id(self, call_id: str) -> str:
        return f"{self._prefix}:call:{call_id}"

    def _add(self, draft: _Draft) -> _Draft:
        self._drafts[draft.source_id] = draft
        if draft.call_id is not None:
            self._by_call_id[draft.call_id] = draft
        return draft

    def request(
        self, request: ToolRequest, index: int, message_source_id: str, at: datetime | None
    ) -> None:
        """A call the model asked for in message ``message_source_id``."""
        if request.call_id is not None and request.call_id in self._by_call_id:
            return  # the same request repeated by a later message
        source_id = (
            self._source_id(request.call_id)
            if request.call_id is not None
            else f"{message_source_id}:call:{index}"
        )
        self._add(
            _Draft(
                source_id, request.name, request.arguments, request.call_id, message_source_id, at
            )
        )

    def respond(
        self, response: ToolResponse, tool_name: str | None, at: datetime | None, origin_id: str
    ) -> None:
        """A result handed back to the model; ``origin_id`` names it when no request matches."""
        draft = self._by_call_id.get(response.call_id) if response.call_id else None
        if draft is None and response.call_id is None:
            draft = next(
                (d for d in self._drafts.values() if d.call_id is None and d.result_text is None),
                None,
            )
        if draft is None:
            # The request is outside the recorded history (trimmed, or never captured);
            # the result is still evidence of what the tool returned.
            source_id = self._source_id(response.call_id) if response.call_id else origin_id
            draft = self._add(
                _Draft(source_id, tool_name or "tool", None, response.call_id, None, at)
            )
            draft.attributes["request_missing"] = True
        if draft.result_text is None:
            draft.result_text = response.text
            draft.completed_at = draft.completed_at or at

    def execute(self, node: SpanNode, execution: ToolExecution) -> None:
        """A tool run recorded as its own span."""
        draft = self._match(node, execution)
        if draft is None:
            draft = self._add(
                _Draft(
                    f"otel:{node.trace_id}:{node.span_id}",
                    execution.name,
                    execution.arguments,
                    execution.call_id,
                    None,
                    node.started_at,
                )
            )
        draft.execution = node
        if draft.arguments is None:
            draft.arguments = execution.arguments
        if draft.name == "tool":
            draft.name = execution.name
        if execution.result is not None:
            draft.result_text = execution.result
        draft.created_at = draft.created_at or node.started_at
        draft.completed_at = node.ended_at or draft.completed_at
        draft.attributes.update(_execution_attributes(node, execution))
        self.by_span[(node.trace_id, node.span_id)] = draft.source_id

    def _match(self, node: SpanNode, execution: ToolExecution) -> _Draft | None:
        if execution.call_id is not None:
            return self._by_call_id.get(execution.call_id)
        for draft in self._drafts.values():
            if (
                draft.execution is None
                and draft.name == execution.name
                and (
                    draft.created_at is None
                    or node.started_at is None
                    or draft.created_at <= node.started_at
                )
            ):
                return draft
        return None

    def tool_calls(self) -> list[ToolCall]:
        """The finished tool calls, in request order."""
        return [_finish(draft) for draft in self._drafts.values()]


def _execution_attributes(node: SpanNode, execution: ToolExecution) -> dict[str, Any]:
    attributes: dict[str, Any] = {"span_id": node.span_id, "trace_id": node.trace_id}
    if node.started_at is not None and node.ended_at is not None:
        attributes["duration_ms"] = int((node.ended_at - node.started_at).total_seconds() * 1000)
    if execution.tool_type is not None:
        attributes["tool_type"] = execution.tool_type
    if node.error is not None:
        attributes["error"] = node.error
    return attributes


def _status(draft: _Draft) -> ToolStatus:
    if draft.execution is not None and draft.execution.error is not None:
        return "error"
    if draft.result_text is not None:
        return "ok"
    if draft.execution is not None and draft.execution.ended_at is not None:
        return "ok"
    return "pending"


def _finish(draft: _Draft) -> ToolCall:
    result_text = draft.result_text
    if result_text is None and draft.execution is not None and draft.execution.error is not None:
        result_text = draft.execution.error
    return ToolCall(
        source_id=draft.source_id,
        name=draft.name,
        arguments=draft.arguments if draft.arguments is not None else {},
        call_id=draft.call_id,
        message_source_id=draft.message_source_id,
        status=_status(draft),
        result_text=result_text,
        created_at=draft.created_at,
        completed_at=draft.completed_at,
        attributes=dict(draft.attributes),
    )
