"""The hook's fast path: hand the payload to a running ``proctor serve`` and print its answer.

A ``proctor gate`` process runs before every tool call of the agent. When a Proctor server
of the same ``$PROCTOR_HOME`` is running (its discovery file names a live process), the
server already holds the session's history and the rules, so the hook forwards the
payload to ``POST /api/gate/claude-code`` on loopback and prints the answer: the same
bytes it would have printed deciding alone. Anything else — no server, a refused or slow
connection (``CONNECT_TIMEOUT_S``, ``ANSWER_TIMEOUT_S``), an answer other than 200 — and the hook decides
itself, as if no server were running.

Standard library only, and one plain HTTP/1.1 exchange over a socket (``http.client``
would import the ``email`` package), so forwarding costs little more than starting Python.
"""

from __future__ import annotations

import os

from proctor.gate._discovery import running_server

TYPE_CHECKING = False  # not typing's: importing typing costs the hook more than it decides
if TYPE_CHECKING:
    import socket

CONNECT_TIMEOUT_S = 0.5
"""How long the hook waits to connect (loopback connects at once, or is refused at once)."""
ANSWER_TIMEOUT_S = 10.0
"""How long it then waits for the answer: a server meeting a large session for the first
time reads its history whole (as the hook would), which can take a second or more."""
HOOK_ROUTE = "/api/gate/claude-code"
_ANY_ADDRESS = {"", "0.0.0.0", "::"}
_MAX_ANSWER = 1 << 20


def forward(
    payload: bytes,
    *,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    answer_timeout_s: float = ANSWER_TIMEOUT_S,
) -> bytes | None:
    """What to print, as the running server answers ``payload``; None: decide locally."""
    address = running_server()
    if address is None:
        return None
    host = "127.0.0.1" if address.host in _ANY_ADDRESS else address.host
    named = f"[{host}]" if ":" in host else host
    head = [
        f"POST {HOOK_ROUTE} HTTP/1.1",
        f"Host: {named}:{address.port}",
        "Content-Type: application/json",
        "Accept: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
    ]
    token = os.environ.get(address.token_env) if address.token_env else None
    if token:
        head.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload
    import socket  # only with a server to ask: it imports enum and selectors (~10 ms)

    try:
        with socket.create_connection((host, address.port), connect_timeout_s) as connection:
            connection.settimeout(answer_timeout_s)
            connection.sendall(request)
            answer = _read_all(connection)
    except (OSError, UnicodeError):
        return None
    return _body(answer)


def _read_all(connection: socket.socket) -> bytes:
    parts: list[bytes] = []
    size = 0
    while size <= _MAX_ANSWER:
        part = connection.recv(65536)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _body(answer: bytes) -> bytes | None:
    """The bytes to print from a raw HTTP answer; None unless it is a 200 with a JSON object."""
    head, separator, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if not separator or len(status) < 2 or status[1] != b"200":
        return None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    if b"transfer-encoding" in headers:
        return None  # the server sends a length; anything else is not worth parsing here
    length = headers.get(b"content-length")
    if length is None or not length.isdigit() or int(length) != len(body):
        return None
    body = body.strip()
    if not body.startswith(b"{") or not body.endswith(b"}"):
        return None
    return b"" if body == b"{}" else body + b"\n"
