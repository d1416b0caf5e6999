"""A web page must not be a client: the checks that keep other sites off the local server.

A token-less ``proctor serve`` on loopback answers anyone who can reach it, and every web
page the user opens can reach it: a page may send "simple" requests to any address without
asking (``text/plain`` or form bodies, body-less POSTs), and through DNS rebinding its own
host name may come to point at 127.0.0.1, which makes the server's answers readable to it.
One pure ASGI layer refuses all three, before any route runs:

- **Host.** A request must name the server as it was bound: ``127.0.0.1``, ``localhost`` or
  ``[::1]`` with the bound port, the bound address itself, or a name the user allowed
  (``--allowed-host``, for a reverse proxy). A rebound name is answered 421.
- **Site.** A state change (any method but GET, HEAD and OPTIONS) that a browser says comes
  from another origin is answered 403: ``Origin``, when sent, must be the server's own, and
  ``Sec-Fetch-Site`` must not be ``cross-site`` or ``same-site`` (another port of
  ``localhost`` is the same *site*).
- **Content type.** A state change says what it sends: JSON (``application/json``), JSON
  Lines (``application/x-ndjson``, ``application/jsonl``) or OTLP protobuf
  (``application/x-protobuf``), which a page can send to another origin only after a CORS
  preflight that this server never grants. ``text/plain`` and form types are answered 415;
  a state change without a body must carry the header ``X-Proctor-Client`` (any value,
  which a page cannot add without a preflight either), or it is answered 403.

Clients that are not browsers (curl, OTLP exporters, Claude Code's HTTP hook) send no
``Origin`` and no ``Sec-Fetch-Site``; they pass with the right content type. CORS stays
closed: no response carries ``Access-Control-Allow-Origin``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from proctor.errors import ConfigError

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing; every other method is a state change."""

ACCEPTED_MEDIA_TYPES = frozenset(
    {"application/json", "application/x-ndjson", "application/jsonl", "application/x-protobuf"}
)
"""What a state change may declare: JSON, JSON Lines (intake) or OTLP protobuf."""

CLIENT_HEADER = "X-Proctor-Client"
"""The header a body-less state change carries (the web UI sends ``X-Proctor-Client: ui``)."""

ALLOWED_HOSTS_ENV = "PROCTOR_ALLOWED_HOSTS"
"""More host names ``proctor serve`` answers to, separated by commas (``--allowed-host``)."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("", "0.0.0.0", "::")


def _authority_name(host: str) -> str:
    """``host`` as it appears in a ``Host`` header: lowercased, IPv6 in brackets."""
    name = host.strip().lower()
    if name.startswith("["):
        return name
    try:
        return f"[{name}]" if ipaddress.ip_address(name).version == 6 else name
    except ValueError:
        return name


def _split_authority(authority: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of ``host[:port]`` (port ``None`` when absent); ``None`` if malformed."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None
        name, rest = authority[: end + 1], authority[end + 1 :]
    else:
        name, colon, port_text = authority.partition(":")
        rest = colon + port_text
    if not name:
        return None
    if not rest:
        return name, None
    if not rest.startswith(":") or not rest[1:].isdigit() or len(rest) > 6:
        return None
    return name, int(rest[1:])


@dataclass(frozen=True)
class AllowedHosts:
    """The names a request's ``Host`` may give: ``name`` → the one port, or any (``None``)."""

    names: tuple[tuple[str, int | None], ...]
    """Accepted ``(name, port)`` pairs; a port of ``None`` accepts the name on any port."""
    configured: tuple[tuple[str, int | None], ...] = ()
    """The pairs the user named (``--allowed-host``): accepted as ``Origin`` too."""
    any_host: bool = False
    """A wildcard bind with a token: every name is accepted (the token guards the server)."""

    def accepts(self, authority: str) -> bool:
        """Whether a ``Host`` header value names this server."""
        if self.any_host:
            return True
        return _matches(authority, self.names)

    def accepts_origin_of(self, authority: str) -> bool:
        """Whether an ``Origin``'s authority is one the user named for a reverse proxy."""
        return _matches(authority, self.configured)

    def describe(self) -> str:
        """The accepted names for a sentence: ``127.0.0.1:8700, localhost:8700, …``."""
        return ", ".join(name if port is None else f"{name}:{port}" for name, port in self.names)


def _matches(authority: str, pairs: Iterable[tuple[str, int | None]]) -> bool:
    split = _split_authority(authority)
    if split is None:
        return False
    name, port = split
    return any(
        name == allowed and (allowed_port is None or (port or 80) == allowed_port)
        for allowed, allowed_port in pairs
    )


def parse_allowed_host(entry: str) -> tuple[str, int | None]:
    """``name`` or ``name:port`` (``[v6]:port``) from ``--allowed-host``; ConfigError if not."""
    text = entry.strip()
    if ":" in text and not text.startswith("["):
        try:
            return _authority_name(str(ipaddress.IPv6Address(text))), None  # a bare IPv6
        except ValueError:
            pass
    split = _split_authority(text) if text and "/" not in text and " " not in text else None
    if split is None or "@" in text:
        raise ConfigError(
            f"--allowed-host {entry!r} is not a host name: give the name the browser or proxy "
            "uses, optionally with a port, e.g. proctor.example.org or proctor.lan:8700 "
            "(no scheme, no path)."
        )
    name, port = split
    return _authority_name(name), port


def server_hosts(
    bind_host: str, port: int | None, *, token: bool, extra: Iterable[str] = ()
) -> AllowedHosts:
    """The names a server bound to ``bind_host:port`` answers to.

    Loopback names with the bound port always (any port when ``port`` is ``None``, for an
    app not served on a known port); the bound address itself; every ``extra`` name
    (``--allowed-host``). A wildcard bind (``0.0.0.0``, ``::``) with a token accepts any
    name: the machine's names cannot be listed, and the token refuses other clients.
    """
    configured = tuple(parse_allowed_host(entry) for entry in extra)
    wildcard = bind_host.strip() in _WILDCARDS
    names = [*_LOOPBACK_NAMES] + ([] if wildcard else [_authority_name(bind_host)])
    pairs = tuple(dict.fromkeys((name, port) for name in names)) + configured
    return AllowedHosts(names=pairs, configured=configured, any_host=token and wildcard)


def allowed_hosts_from_env(value: str | None) -> list[str]:
    """The names in ``$PROCTOR_ALLOWED_HOSTS`` (commas or spaces between them)."""
    return [part for part in (value or "").replace(",", " ").split() if part]


class RequestGuard:
    """Refuses foreign ``Host`` names (421), cross-site state changes (403) and state
    changes in a type a page can send to any origin (415), with a sentence saying what to do.
    """

    def __init__(self, app: ASGIApp, hosts: AllowedHosts) -> None:
        self._app = app
        self._hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self._app(scope, receive, send)
            return
        status, sentence = refusal
        body = json.dumps({"detail": sentence}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[str, str] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key.decode("latin-1"), value.decode("latin-1"))
        host = headers.get("host", "")
        if not self._hosts.accepts(host):
            return 421, (
                f"this server does not answer to the host {host or '(none)'!r}: it answers to "
                f"{self._hosts.describe()}. Open it under one of those names; behind a "
                "reverse proxy or under another name, start it with "
                f"`proctor serve --allowed-host NAME` (or set {ALLOWED_HOSTS_ENV})."
            )
        if scope["method"].upper() in SAFE_METHODS:
            return None
        return _site_refusal(headers, self._hosts) or _content_refusal(headers, scope["method"])


def _site_refusal(headers: dict[str, str], hosts: AllowedHosts) -> tuple[int, str] | None:
    origin = headers.get("origin")
    if origin is not None and not _own_origin(origin, headers.get("host", ""), hosts):
        return 403, (
            f"a page from {origin!r} may not change this server's data: requests that change "
            "something must come from Proctor's own pages or from a client that is not a "
            "browser (curl, an exporter, a hook)."
        )
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site in ("cross-site", "same-site"):
        return 403, (
            f"the browser says this request comes from another site (Sec-Fetch-Site: {site}); "
            "only Proctor's own pages may change its data."
        )
    return None


def _own_origin(origin: str, host: str, hosts: AllowedHosts) -> bool:
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path:
        return False  # "null" (a sandboxed frame, a file) and anything malformed
    return parts.netloc.lower() == host.strip().lower() or hosts.accepts_origin_of(parts.netloc)


def _content_refusal(headers: dict[str, str], method: str) -> tuple[int, str] | None:
    declared = headers.get("content-type", "")
    media = declared.split(";", 1)[0].strip().lower()
    if media in ACCEPTED_MEDIA_TYPES:
        return None
    if media:
        return 415, (
            f"Content-Type {media!r} is not accepted for {method.upper()}: send JSON with "
            "`Content-Type: application/json` (live intake also takes application/x-ndjson, "
            "OTLP application/x-protobuf)."
        )
    if _has_body(headers):
        return 415, (
            f"a {method.upper()} with a body needs a Content-Type: send JSON with "
            "`Content-Type: application/json`."
        )
    if CLIENT_HEADER.lower() in headers:
        return None
    return 403, (
        f"a {method.upper()} without a body must carry the header `{CLIENT_HEADER}` (any "
        f"value, e.g. `{CLIENT_HEADER}: curl`) or a JSON body, so that no web page can send it."
    )


def _has_body(headers: dict[str, str]) -> bool:
    length = headers.get("content-length", "").strip()
    return "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)
