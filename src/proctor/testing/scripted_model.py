"""A scripted model server: real HTTP on loopback, answers from a script.

It speaks the OpenAI Chat Completions API (``POST …/chat/completions``, streamed as
server-sent events or not) and the Anthropic Messages API (``POST …/messages``, the
answer as a forced tool call), so every provider in ``proctor.models`` can be exercised
over a real socket without a real model. Each request takes the next reply from the
script (or asks a responder function); a reply can also fail on purpose — a status such
as 429 or 503, a stall, a stream cut short, a stream larger than any capacity, text that
is not JSON, or ``finish_reason: "length"``. Every request is recorded so tests can check
exactly what a model was sent.

It stands in for a model in tests and offline demos; it is never Proctor's default.

    with ScriptedModelServer([{"decisions": []}]) as server:
        connection = server.connection()
        ...
        assert server.requests[0].body["messages"][0]["role"] == "system"

Run it on its own for a demo: ``python -m proctor.testing.scripted_model --port 8765
--reply '{"decisions": []}'`` (the reply is repeated for every request).
"""

from __future__ import annotations

import argparse
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from proctor.model_types import ModelConnection

Responder = Callable[["RecordedRequest"], "ScriptedReply | dict[str, Any] | str"]


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One scripted answer, or one scripted failure."""

    content: str | dict[str, Any] = ""
    """The answer text; a dict is sent as its JSON."""
    status: int = 200
    """HTTP status; anything but 200 sends an error body in the provider's format."""
    stall_s: float = 0.0
    """Wait this long before answering (after the headers when streaming)."""
    truncate: bool = False
    """Streaming only: send half the content, then close the connection."""
    pad_to_bytes: int = 0
    """Stream at least this many bytes (content is padded with spaces) — for capacity tests."""
    finish_reason: str = "stop"
    """``stop`` or ``length`` (Anthropic: ``end_turn``/``tool_use`` or ``max_tokens``)."""
    input_tokens: int | None = 100
    """Usage reported to the client; ``None`` reports no usage at all."""
    output_tokens: int | None = 20
    retry_after: str | None = None
    """``Retry-After`` header for error replies."""

    @property
    def text(self) -> str:
        """The content as sent."""
        return self.content if isinstance(self.content, str) else json.dumps(self.content)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """What a client sent."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages (OpenAI ``messages``; Anthropic ``system`` + ``messages``)."""
        messages: list[dict[str, Any]] = list(self.body.get("messages", []))
        system = self.body.get("system")
        if isinstance(system, str):
            messages.insert(0, {"role": "system", "content": system})
        return messages

    def text_of(self, role: str) -> str:
        """All content sent with one role, joined."""
        parts: list[str] = []
        for message in self.messages:
            if message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(block.get("text", "")) for block in content)
        return "\n".join(parts)


def _as_reply(item: ScriptedReply | dict[str, Any] | str) -> ScriptedReply:
    return item if isinstance(item, ScriptedReply) else ScriptedReply(content=item)


@dataclass
class _Script:
    replies: deque[ScriptedReply] = field(default_factory=deque)
    responder: Responder | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def next_reply(self, request: RecordedRequest) -> ScriptedReply:
        with self.lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            return _as_reply(self.responder(request))
        return ScriptedReply(status=500, content="the script has no reply left for this request")


class ScriptedModelServer:
    """An OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 that follows a script."""

    def __init__(
        self,
        replies: Iterable[ScriptedReply | dict[str, Any] | str] = (),
        *,
        responder: Responder | None = None,
        port: int = 0,
    ) -> None:
        self._script = _Script(deque(_as_reply(r) for r in replies), responder)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self._script))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:41234/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order."""
        with self._script.lock:
            return list(self._script.requests)

    def push(self, *replies: ScriptedReply | dict[str, Any] | str) -> None:
        """Append replies to the script."""
        with self._script.lock:
            self._script.replies.extend(_as_reply(r) for r in replies)

    def connection(
        self, name: str = "scripted", *, provider: str = "openai", model: str = "scripted-model"
    ) -> ModelConnection:
        """A connection pointing at this server."""
        return ModelConnection.model_validate(
            {"name": name, "provider": provider, "model": model, "base_url": self.url}
        )

    def start(self) -> ScriptedModelServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; stalled replies are released."""
        self._script.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(script: _Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "scripted-model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._json(400, {"error": {"message": "request body is not JSON"}})
                return
            anthropic = self.path.rstrip("/").endswith("/messages")
            if not anthropic and not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            request = RecordedRequest(
                self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
            reply = script.next_reply(request)
            if reply.status != 200:
                self._stall(reply.stall_s)
                headers = {"Retry-After": reply.retry_after} if reply.retry_after else {}
                self._json(reply.status, _error_body(reply, anthropic=anthropic), headers)
                return
            if body.get("stream"):
                self._stream(reply, anthropic=anthropic)
            else:
                self._stall(reply.stall_s)
                self._json(200, _whole_body(reply, anthropic=anthropic))

        def _stall(self, seconds: float) -> None:
            if seconds > 0:
                script.stopping.wait(seconds)

        def _json(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, reply: ScriptedReply, *, anthropic: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.wfile.flush()
            self._stall(reply.stall_s)
            try:
                for event in _events(reply, anthropic=anthropic):
                    self.wfile.write(event)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


def _error_body(reply: ScriptedReply, *, anthropic: bool) -> dict[str, Any]:
    message = reply.text or f"scripted error {reply.status}"
    if anthropic:
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "scripted", "code": reply.status}}


def _chunks(text: str, size: int = 64) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _padded(reply: ScriptedReply) -> str:
    text = reply.text
    if reply.pad_to_bytes > len(text.encode()):
        text += " " * (reply.pad_to_bytes - len(text.encode()))
    return text


def _sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {payload}\n\n".encode()


def _events(reply: ScriptedReply, *, anthropic: bool) -> Iterator[bytes]:
    text = _padded(reply)
    if reply.truncate:
        text = text[: len(text) // 2]
    return _anthropic_events(reply, text) if anthropic else _openai_events(reply, text)


def _openai_events(reply: ScriptedReply, text: str) -> Iterator[bytes]:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "scripted-model"}
    yield _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    for piece in _chunks(text, 4096 if reply.pad_to_bytes else 64):
        yield _sse({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
    if reply.truncate:
        return
    yield _sse(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
    )
    if reply.input_tokens is not None or reply.output_tokens is not None:
        usage = {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens}
        yield _sse({**base, "choices": [], "usage": usage})
    yield _sse("[DONE]")


def _anthropic_stop(reply: ScriptedReply) -> str:
    return "max_tokens" if reply.finish_reason == "length" else "tool_use"


def _anthropic_events(reply: ScriptedReply, text: str) -> Iterator[bytes]:
    usage_in = {"input_tokens": reply.input_tokens} if reply.input_tokens is not None else {}
    yield _sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_scripted",
                "role": "assistant",
                "model": "scripted-model",
                "content": [],
                "usage": usage_in,
            },
        },
        "message_start",
    )
    block = {"type": "tool_use", "id": "toolu_scripted", "name": "answer", "input": {}}
    yield _sse(
        {"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start"
    )
    for piece in _chunks(text, 4096 if reply.pad_to_bytes else 64):
        delta = {"type": "input_json_delta", "partial_json": piece}
        yield _sse(
            {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
        )
    if reply.truncate:
        return
    yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    usage_out = {"output_tokens": reply.output_tokens} if reply.output_tokens is not None else {}
    yield _sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": _anthropic_stop(reply)},
            "usage": usage_out,
        },
        "message_delta",
    )
    yield _sse({"type": "message_stop"}, "message_stop")


def _whole_body(reply: ScriptedReply, *, anthropic: bool) -> dict[str, Any]:
    text = _padded(reply)
    if anthropic:
        try:
            tool_input: Any = json.loads(text)
        except json.JSONDecodeError:
            tool_input = text
        usage: dict[str, Any] = {}
        if reply.input_tokens is not None:
            usage["input_tokens"] = reply.input_tokens
        if reply.output_tokens is not None:
            usage["output_tokens"] = reply.output_tokens
        return {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": "scripted-model",
            "content": [
                {"type": "tool_use", "id": "toolu_scripted", "name": "answer", "input": tool_input}
            ],
            "stop_reason": _anthropic_stop(reply),
            "usage": usage,
        }
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": "scripted-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    if reply.input_tokens is not None or reply.output_tokens is not None:
        body["usage"] = {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
        }
    return body


def main(argv: list[str] | None = None) -> None:
    """Serve one repeated reply until interrupted (offline demos)."""
    parser = argparse.ArgumentParser(prog="python -m proctor.testing.scripted_model")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--reply", default='{"decisions": []}', help="JSON text sent for every request"
    )
    args = parser.parse_args(argv)
    reply = ScriptedReply(content=args.reply)
    server = ScriptedModelServer(responder=lambda _request: reply, port=args.port)
    print(f"scripted model server on {server.url} (Ctrl-C to stop)", flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()


if __name__ == "__main__":
    main()
