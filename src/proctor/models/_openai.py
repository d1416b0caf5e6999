"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio…).

``POST {base_url}/chat/completions``, streamed, with the answer's schema in strict
``json_schema`` mode and usage requested in the stream's last chunk.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from proctor.errors import ModelError
from proctor.model_types import ModelConnection, ModelRequest
from proctor.models._attempt import AttemptProgress
from proctor.models._http import count, parse_event_json, stream_events
from proctor.models._schema import strict_schema
from proctor.models._sse import ServerSentEvent

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def base_url(connection: ModelConnection) -> str:
    """The endpoint requests go to."""
    return (connection.base_url or DEFAULT_BASE_URL).rstrip("/")


def request_body(connection: ModelConnection, request: ModelRequest) -> dict[str, Any]:
    """The chat-completions request for ``request``."""
    # OpenAI's own API wants max_completion_tokens; compatible servers know max_tokens.
    official = urlparse(base_url(connection)).hostname == "api.openai.com"
    return {
        "model": connection.model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": request.temperature,
        "max_completion_tokens" if official else "max_tokens": request.max_output_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "strict": True,
                "schema": strict_schema(request.json_schema),
            },
        },
    }


async def openai_attempt(
    connection: ModelConnection,
    request: ModelRequest,
    progress: AttemptProgress,
    *,
    key: str | None,
    capacity_bytes: int,
) -> None:
    """One streamed chat completion into ``progress``."""
    headers = {"Accept": "text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"

    def on_event(event: ServerSentEvent) -> None:
        if event.data.strip() == "[DONE]":
            return
        chunk = parse_event_json(connection, event)
        if "error" in chunk:
            raise ModelError("server", f"{connection.name!r} failed mid-answer: {chunk['error']}")
        progress.model = chunk.get("model") or progress.model
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            progress.input_tokens = count(usage.get("prompt_tokens"))
            progress.output_tokens = count(usage.get("completion_tokens"))
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                progress.parts.append(delta["content"])
            if choice.get("finish_reason"):
                progress.finish_reason = choice["finish_reason"]

    await stream_events(
        connection,
        f"{base_url(connection)}/chat/completions",
        headers=headers,
        body=request_body(connection, request),
        capacity_bytes=capacity_bytes,
        on_event=on_event,
    )
    if progress.finish_reason is None:
        raise ModelError(
            "connection", f"the answer from {connection.name!r} ended before the model finished"
        )
