"""Who may call the API: loopback by default, a bearer token on every request when set."""

from __future__ import annotations

import hmac
import ipaddress
import json

from starlette.types import ASGIApp, Receive, Scope, Send

from proctor.api._ui import is_public
from proctor.errors import ConfigError


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``127.0.0.0/8``, ``::1`` or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, token_env: str) -> None:
    """Refuse to serve a non-loopback address without a token."""
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"proctor serve refuses to listen on {host!r} without a token: anyone who can "
            f"reach that address could read and change the store. Set {token_env} to a long "
            "random secret (every request must then carry `Authorization: Bearer TOKEN`), "
            "or use --host 127.0.0.1."
        )


class BearerTokenMiddleware:
    """Answers 401 to every HTTP request whose bearer token is not the configured one.

    The UI's static shell (no data) is the exception: the page must load to ask for it.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        if self._carries_token(given) or is_public(scope["path"]):
            await self._app(scope, receive, send)
            return
        body = json.dumps(
            {"detail": "this API needs `Authorization: Bearer TOKEN` with the server's token"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _carries_token(self, authorization: bytes) -> bool:
        """Whether ``Authorization`` is ``Bearer TOKEN``: the scheme in any case (RFC 9110
        §11.1), the token compared in constant time."""
        scheme, _, credentials = authorization.strip().partition(b" ")
        matches = hmac.compare_digest(credentials.strip(), self._expected)
        return scheme.lower() == b"bearer" and matches
