"""The shell asks for its own ES modules at once (a ``Link: rel=modulepreload`` header
computed from the files), so its import chain costs no round trip per level; the pages'
modules are not preloaded (the page the address names must not wait behind them)."""

from __future__ import annotations

import re
from pathlib import Path

from proctor.api._ui import UI_DIR, preload_links, shell_page
from tests.api.conftest import Api, database, prepared_database

__all__ = ["database", "prepared_database"]  # the API suite's store fixtures, used here


def _linked(header: str) -> dict[str, str]:
    return dict(re.findall(r"<([^>]+)>;\s*rel=([\w-]+)", header))


def test_the_shell_preloads_its_own_modules_only_and_each_is_served(database: Path) -> None:
    api = Api(database)
    try:
        shell = api.get("/")
        linked = _linked(shell.headers["link"])
        assert set(linked) == {
            "/ui/js/app.js",
            "/ui/js/api.js",
            "/ui/js/dom.js",
            "/ui/js/pages/search.js",
        }
        assert set(linked.values()) == {"modulepreload"}
        for url in sorted(linked):
            served = api.get(url)
            assert served.status_code == 200, url
            assert served.headers["content-type"].startswith("text/javascript"), url
            assert served.headers["etag"] and served.headers["last-modified"], url
            again = api.get(url, headers={"if-none-match": served.headers["etag"]})
            assert again.status_code == 304, url
    finally:
        api.close()


def test_a_module_the_shell_imports_is_preloaded_without_listing_it(tmp_path: Path) -> None:
    (tmp_path / "js" / "pages").mkdir(parents=True)
    (tmp_path / "js" / "app.js").write_text(
        'import { a } from "./util.js";\nimport * as p from "./pages/new-page.js";\n'
        'const later = () => import("./pages/lazy.js");\n'
    )
    (tmp_path / "js" / "util.js").write_text("export const a = 1;\n")
    (tmp_path / "js" / "pages" / "new-page.js").write_text(
        "import { a } from '../util.js';\nexport const routes = [];\n"
    )
    (tmp_path / "js" / "pages" / "lazy.js").write_text("export const routes = [];\n")
    assert _linked(preload_links(tmp_path)) == {
        "/ui/js/app.js": "modulepreload",
        "/ui/js/util.js": "modulepreload",
        "/ui/js/pages/new-page.js": "modulepreload",
    }


def test_the_shell_links_its_stylesheets_as_one_file_in_their_order_cached_for_good(
    database: Path,
) -> None:
    api = Api(database)
    try:
        html = api.get("/").text
        linked = re.findall(r'<link rel="stylesheet" href="([^"]+)">', html)
        assert len(linked) == 1 and linked[0].startswith("/ui/styles.css?v=")
        sheet = api.get(linked[0])
        assert sheet.status_code == 200
        assert sheet.headers["content-type"].startswith("text/css")
        assert "immutable" in sheet.headers["cache-control"]
        listed = re.findall(
            r'<link rel="stylesheet" href="/ui/([^"]+)">', (UI_DIR / "index.html").read_text()
        )
        assert len(listed) > 1 and listed[0] == "app.css"
        at = [sheet.text.index((UI_DIR / name).read_text()) for name in listed]
        assert at == sorted(at), "the files keep index.html's order (the cascade)"
    finally:
        api.close()


def test_an_edited_stylesheet_changes_the_link_and_shows_on_the_next_visit(
    tmp_path: Path,
) -> None:
    (tmp_path / "css").mkdir()
    (tmp_path / "index.html").write_text(
        '<head>\n  <link rel="stylesheet" href="/ui/a.css">\n'
        '  <link rel="stylesheet" href="/ui/css/b.css">\n  <script src="x"></script>\n</head>\n'
    )
    (tmp_path / "a.css").write_text("p { color: red; }")
    (tmp_path / "css" / "b.css").write_text("p { color: blue; }")
    html, styles = shell_page(tmp_path)
    assert html.count("<link") == 1 and "<script" in html
    assert styles.decode().index("red") < styles.decode().index("blue")
    (tmp_path / "css" / "b.css").write_text("p { color: green; }")
    edited, edited_styles = shell_page(tmp_path)
    assert edited != html and b"green" in edited_styles
