"""The web UI (SPEC UI-3): static files shipped in the package, served by ``proctor serve``.

The page shell holds no data, so it is served without the token; everything it shows
comes from ``/api``, which asks for the token when one is set. A strict Content Security
Policy allows only the UI's own scripts and styles: even if observed content ever reached
the page as markup, no inline script or event handler in it would run.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response
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


_STATIC_IMPORT = re.compile(r"""^import\s[^;]*?\bfrom\s+["'](\.{1,2}/[^"']+)["']""", re.MULTILINE)
"""A module's static ``import … from "./relative.js"`` (dynamic ``import()`` is not one)."""


def static_imports(module: str, ui_dir: Path = UI_DIR) -> set[str]:
    """``module`` (``js/…``) and every module it imports statically, level by level."""
    found: set[str] = set()
    pending = [module]
    while pending:
        current = pending.pop()
        path = ui_dir / current
        if current in found or not path.is_file():
            continue
        found.add(current)
        for target in _STATIC_IMPORT.findall(path.read_text(encoding="utf-8")):
            pending.append(posixpath.normpath(posixpath.join(posixpath.dirname(current), target)))
    return found


def shell_modules(ui_dir: Path = UI_DIR) -> list[str]:
    """The shell's modules: ``js/app.js`` and what it imports statically.

    The pages' modules are not among them: the shell imports the one the address names
    itself (with that page's own imports), then the others once that page is shown.
    """
    return sorted(static_imports("js/app.js", ui_dir))


def preload_links(ui_dir: Path = UI_DIR) -> str:
    """A ``Link`` header that asks the browser for the shell's ES modules at once.

    The shell's modules import each other two levels deep; without it the browser learns
    of each level only once the one above has arrived. Only the shell's: preloading every
    page's modules (the trace's, markdown's) would make the page the address names wait
    behind files it does not use. Computed from the files, so a new import is included.
    """
    return ", ".join(f"</ui/{module}>; rel=modulepreload" for module in shell_modules(ui_dir))


_STYLESHEET = re.compile(r'^[ \t]*<link rel="stylesheet" href="/ui/([^"?]+)">\n', re.MULTILINE)
"""One of ``index.html``'s stylesheet links (a file under ``/ui/``)."""

STYLES_PATH = "/ui/styles.css"
"""Where the shell's stylesheets are served as one file (``?v=`` their digest)."""


def shell_page(ui_dir: Path = UI_DIR) -> tuple[str, bytes]:
    """``index.html`` with its stylesheets linked as one, and that one: the files it lists,
    concatenated in its order (the cascade unchanged).

    Thirteen stylesheets were thirteen requests in front of the shell's modules on every
    cold visit. The link carries the sheet's digest, so the sheet can be cached for good;
    read from the files at each visit of the shell, so an edited style shows on reload.
    """
    html = (ui_dir / "index.html").read_text(encoding="utf-8")
    names = _STYLESHEET.findall(html)
    if not names:
        return html, b""
    styles = "".join(
        f"/* {name} */\n{(ui_dir / name).read_text(encoding='utf-8')}\n" for name in names
    ).encode()
    digest = hashlib.sha256(styles).hexdigest()[:16]
    first = _STYLESHEET.search(html)
    assert first is not None
    link = f'  <link rel="stylesheet" href="{STYLES_PATH}?v={digest}">\n'
    html = html[: first.start()] + link + _STYLESHEET.sub("", html[first.start() :])
    return html, styles


def mount_ui(app: FastAPI) -> None:
    """Serve the UI at ``/`` (the shell) and ``/ui/`` (its files: the modules, the styles,
    and ``vendor/``, the front-end packages ``make ui-assets`` copies from npm)."""
    links = preload_links()

    @app.get(STYLES_PATH, include_in_schema=False)
    def styles() -> Response:
        return Response(
            shell_page()[1],
            media_type="text/css; charset=utf-8",
            headers={"cache-control": "public, max-age=31536000, immutable"},
        )

    app.mount("/ui", StaticFiles(directory=UI_DIR), name="ui")

    @app.get("/", include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(shell_page()[0], headers={"cache-control": "no-cache", "link": links})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(UI_DIR / "favicon.svg", media_type="image/svg+xml")
