"""One streamed HTTP request to a model API, with the response capacity enforced on the wire.

Bytes are counted as they arrive; the moment the count passes the capacity the stream is
closed and the attempt fails with ``capacity`` (never retried). HTTP statuses become
``ModelError`` kinds: 429 ``rate_limited`` and 5xx ``server`` (both retried once),
401/403 ``auth``; 400/413/422 ``rejected`` (this request was refused, e.g. a prompt
longer than the model's context — the next one may pass); any other refusal ``config``
(wrong model or endpoint); a dropped or refused connection is ``connection`` (retried
once).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from proctor.errors import ModelError
from proctor.model_types import ModelConnection
from proctor.models._sse import ServerSentEvent, SseDecoder

_TIMEOUT = httpx.Timeout(None, connect=30.0)
"""No read limit of its own: the stage timeout bounds the whole call."""
_ERROR_BODY_LIMIT = 64 * 1024


async def stream_events(
    connection: ModelConnection,
    url: str,
    *,
    headers: dict[str, str],
    body: dict[str, Any],
    capacity_bytes: int,
    on_event: Callable[[ServerSentEvent], None],
) -> None:
    """POST ``body`` and hand every server-sent event of the answer to ``on_event``."""
    try:
        async with (
            httpx.AsyncClient(timeout=_TIMEOUT) as client,
            client.stream("POST", url, headers=headers, json=body) as response,
        ):
            if response.status_code != 200:
                detail = await _error_detail(response)
                raise status_error(connection, response.status_code, detail)
            decoder = SseDecoder()
            received = 0
            async for chunk in response.aiter_bytes():
                received += len(chunk)
                if received > capacity_bytes:
                    raise ModelError(
                        "capacity",
                        f"the answer from {connection.name!r} passed the response capacity of "
                        f"{capacity_bytes // 1024} KiB and was aborted; raise it with "
                        "`proctor models limits --capacity-kib N` if the answers are that large",
                    )
                for event in decoder.feed(chunk):
                    on_event(event)
    except httpx.TransportError as exc:
        raise ModelError(
            "connection", f"the connection to {connection.name!r} failed: {exc!r}"
        ) from exc


async def _error_detail(response: httpx.Response) -> str:
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= _ERROR_BODY_LIMIT:
            break
    text = body[:_ERROR_BODY_LIMIT].decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    error = parsed.get("error") if isinstance(parsed, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return str(message if message else text)[:300]


def status_error(connection: ModelConnection, status: int, detail: str) -> ModelError:
    """The error for an HTTP status other than 200."""
    said = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
    name = connection.name
    if status == 429:
        return ModelError("rate_limited", f"{name!r} is rate limited ({said})", status=status)
    if status >= 500:
        return ModelError("server", f"{name!r} failed on its side ({said})", status=status)
    if status in (401, 403):
        fix = (
            f"set {connection.api_key_env} to a valid key"
            if connection.api_key_env
            else "it has no key variable; add the connection again with --api-key-env VAR"
        )
        return ModelError(
            "auth", f"{name!r} refused the credentials ({said}); {fix}", status=status
        )
    if status in (400, 413, 422):
        return ModelError("rejected", f"{name!r} refused this request ({said})", status=status)
    return ModelError(
        "config",
        f"{name!r} refused the request ({said}); check the connection's model and endpoint "
        "with `proctor models test " + name + "`",
        status=status,
    )


def parse_event_json(connection: ModelConnection, event: ServerSentEvent) -> dict[str, Any]:
    """An event's data as a JSON object, or ``bad_response``."""
    try:
        value = json.loads(event.data)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ModelError(
            "bad_response", f"{connection.name!r} streamed an event that is not a JSON object"
        )
    return value


def count(value: Any) -> int | None:
    """A token count as reported, or None when absent or not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
