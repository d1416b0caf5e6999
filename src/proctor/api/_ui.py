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


def preload_links(ui_dir: Path = UI_DIR) -> str:
    """A ``Link`` header that asks the browser for every ES module of the UI at once.

    The modules import each other five levels deep; without it the browser learns of each
    level only once the one above has arrived, a round trip per level before the first
    page can draw. With it they all load in parallel with the shell (as the start page
    would load them all anyway). Computed from the files, so a new module is included.
    """
    modules = sorted(path.relative_to(ui_dir).as_posix() for path in ui_dir.glob("js/**/*.js"))
    return ", ".join(f"</ui/{module}>; rel=modulepreload" for module in modules)


def mount_ui(app: FastAPI) -> None:
    """Serve the UI at ``/`` (the shell) and ``/ui/`` (its files: the modules, the styles,
    and ``vendor/``, the front-end packages ``make ui-assets`` copies from npm)."""
    app.mount("/ui", StaticFiles(directory=UI_DIR), name="ui")
    links = preload_links()

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(
            UI_DIR / "index.html", headers={"cache-control": "no-cache", "link": links}
        )

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(UI_DIR / "favicon.svg", media_type="image/svg+xml")
