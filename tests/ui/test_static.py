"""The UI's files and how they are served: no markup from strings, a strict CSP, the shell
without the token and the data only with it (SPEC UI-3; the brief's security rules)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.api._ui import UI_DIR
from tests.api.conftest import Api, database, prepared_database

__all__ = ["database", "prepared_database"]  # the API suite's store fixtures, used here

SINKS = re.compile(
    r"\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|"
    r"setAttribute\(\s*[\"']on|srcdoc"
)


def ui_files() -> list[Path]:
    return sorted(p for p in UI_DIR.rglob("*") if p.suffix in {".js", ".html", ".css"})


@pytest.mark.parametrize("path", ui_files(), ids=lambda p: str(p.relative_to(UI_DIR)))
def test_no_ui_file_turns_strings_into_markup_or_code(path: Path) -> None:
    text = path.read_text()
    if path.name == "d3.min.js":
        # d3-selection's selection.html() sets innerHTML; the UI never calls it (below).
        text = re.sub(r"this(\.node\(\))?\.innerHTML", "", text)
    assert not SINKS.findall(text), f"{path.name} uses an HTML/JS sink"
    if path.suffix == ".html":
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), "inline script"
        assert not re.search(r"\son[a-z]+=", text), "inline event handler"
        assert "http://" not in text and "https://" not in text, "a remote resource"


def test_no_ui_code_asks_d3_for_markup() -> None:
    """d3 sets markup only through ``selection.html()``; the UI's own code never calls it."""
    for path in ui_files():
        if "vendor" not in path.parts:
            assert not re.search(r"\.html\(", path.read_text()), f"{path.name} calls .html()"


def test_no_ui_file_loads_anything_from_another_origin() -> None:
    for path in ui_files():
        for url in re.findall(
            r"(?:src|href|import)\s*[=(]?\s*[\"'](https?://[^\"']+)", path.read_text()
        ):
            pytest.fail(f"{path.name} loads {url}")


def test_the_shell_is_public_and_strict_while_the_api_needs_the_token(database: Path) -> None:
    api = Api(database, token="a-long-test-token")
    try:
        shell = api.get("/")
        assert shell.status_code == 200
        assert '<script type="module" src="/ui/js/app.js">' in shell.text
        policy = shell.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy
        assert api.get("/ui/js/app.js").status_code == 200
        assert api.get("/ui/js/app.js").headers["content-type"].startswith("text/javascript")
        assert api.get("/api/conversations").status_code == 401
        # A path that only looks like the shell is not public.
        assert api.get("/ui/../api/conversations").status_code in (401, 404)
        authorised = api.get(
            "/api/conversations", headers={"Authorization": "Bearer a-long-test-token"}
        )
        assert authorised.status_code == 200
    finally:
        api.close()


def test_the_static_files_cannot_be_used_to_read_outside_the_ui_folder(database: Path) -> None:
    api = Api(database)
    try:
        for probe in ("/ui/../_app.py", "/ui/%2e%2e/_app.py", "/ui/..%2f_app.py"):
            response = api.get(probe)
            assert response.status_code == 404 or "create_app" not in response.text, probe
    finally:
        api.close()
