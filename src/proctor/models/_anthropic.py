"""The Anthropic Messages API: the answer is a forced call of one tool whose input is the JSON.

``POST {base_url}/messages``, streamed; the tool's ``input_json_delta`` events carry the
answer. ``stop_reason: max_tokens`` is normalised to ``length``.
"""

from __future__ import annotations

from typing import Any

from proctor.errors import ModelError, ModelErrorKind
from proctor.model_types import ModelConnection, ModelRequest
from proctor.models._attempt import AttemptProgress
from proctor.models._http import count, parse_event_json, stream_events
from proctor.models._schema import inline_refs
from proctor.models._sse import ServerSentEvent

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
API_VERSION = "2023-06-01"
_STREAM_ERROR_KINDS: dict[str, ModelErrorKind] = {
    "overloaded_error": "server",
    "api_error": "server",
    "rate_limit_error": "rate_limited",
}
"""Errors sent inside a stream that are worth the one retry; any other is ``bad_response``."""


def base_url(connection: ModelConnection) -> str:
    """The endpoint requests go to."""
    return (connection.base_url or DEFAULT_BASE_URL).rstrip("/")


def request_body(connection: ModelConnection, request: ModelRequest) -> dict[str, Any]:
    """The Messages API request for ``request``: system apart, the answer as a forced tool call."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system")
    body: dict[str, Any] = {
        "model": connection.model,
        "max_tokens": request.max_output_tokens,
        "temperature": request.temperature,
        "messages": [
            {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
        ],
        "tools": [
            {
                "name": request.schema_name,
                "description": "Give the answer.",
                "input_schema": inline_refs(request.json_schema),
            }
        ],
        "tool_choice": {"type": "tool", "name": request.schema_name},
        "stream": True,
    }
    if system:
        body["system"] = system
    return body


async def anthropic_attempt(
    connection: ModelConnection,
    request: ModelRequest,
    progress: AttemptProgress,
    *,
    key: str | None,
    capacity_bytes: int,
) -> None:
    """One streamed Messages API call into ``progress``."""
    headers = {"anthropic-version": API_VERSION, "Accept": "text/event-stream"}
    if key:
        headers["x-api-key"] = key

    def on_event(event: ServerSentEvent) -> None:
        data = parse_event_json(connection, event)
        kind = data.get("type")
        if kind == "message_start":
            message = data.get("message") or {}
            progress.model = message.get("model") or progress.model
            progress.input_tokens = count((message.get("usage") or {}).get("input_tokens"))
        elif kind == "content_block_delta":
            delta = data.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                progress.parts.append(str(delta.get("partial_json", "")))
        elif kind == "message_delta":
            usage = data.get("usage") or {}
            progress.output_tokens = count(usage.get("output_tokens"))
            if count(usage.get("input_tokens")) is not None:
                progress.input_tokens = count(usage.get("input_tokens"))
            stop = (data.get("delta") or {}).get("stop_reason")
            if stop:
                progress.finish_reason = "length" if stop == "max_tokens" else str(stop)
        elif kind == "error":
            error = data.get("error") or {}
            raise ModelError(
                _STREAM_ERROR_KINDS.get(str(error.get("type")), "bad_response"),
                f"{connection.name!r} failed mid-answer: {error.get('message', error)}",
            )

    await stream_events(
        connection,
        f"{base_url(connection)}/messages",
        headers=headers,
        body=request_body(connection, request),
        capacity_bytes=capacity_bytes,
        on_event=on_event,
    )
    if progress.finish_reason is None:
        raise ModelError(
            "connection", f"the answer from {connection.name!r} ended before the model finished"
        )
