"""The web UI (SPEC UI-3): static files shipped in the package, served by ``proctor serve``.

The page shell holds no data, so it is served without the token; everything it shows
comes from ``/api``, which asks for the token when one is set. A strict Content Security
Policy allows only the UI's own scripts and styles: even if observed content ever reached
the page as markup, no inline script or event handler in it would run.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UI_DIR = Path(__file__).parent / "ui"
"""The UI's files: ``index.html``, ``app.css`` and the ES modules under ``js/``."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


def is_public(path: str) -> bool:
    """Whether ``path`` is part of the UI's static shell (served without the token)."""
    if ".." in path or "\\" in path:  # never let a dot segment ride on the public prefix
        return False
    return path == "/" or path == "/favicon.ico" or path.startswith("/ui/")


class SecurityHeaders:
    """``nosniff`` and ``no-referrer`` on every response; the CSP on the UI's pages."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        page = is_public(scope["path"])

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                ]
                if page:  # FastAPI's own /docs page needs its inline script: UI pages only
                    headers += [
                        (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                        (b"x-frame-options", b"DENY"),
                    ]
                message["headers"] = headers
            await send(message)

        await self._app(scope, receive, with_headers)


def mount_ui(app: FastAPI) -> None:
    """Serve the UI at ``/`` (the shell) and ``/ui/`` (its files)."""
    app.mount("/ui", StaticFiles(directory=UI_DIR), name="ui")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(UI_DIR / "index.html", headers={"cache-control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(UI_DIR / "favicon.svg", media_type="image/svg+xml")
