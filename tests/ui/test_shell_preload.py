"""The shell asks for its own ES modules at once (a ``Link: rel=modulepreload`` header
computed from the files), so its import chain costs no round trip per level; the pages'
modules are not preloaded (the page the address names must not wait behind them)."""

from __future__ import annotations

import re
from pathlib import Path

from proctor.api._ui import preload_links
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
