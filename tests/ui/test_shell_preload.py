"""The shell asks for every ES module of the UI at once (a ``Link: rel=modulepreload``
header computed from the files), so the import chain costs no round trip per level."""

from __future__ import annotations

import re
from pathlib import Path

from proctor.api._ui import UI_DIR, preload_links
from tests.api.conftest import Api, database, prepared_database

__all__ = ["database", "prepared_database"]  # the API suite's store fixtures, used here


def _linked(header: str) -> dict[str, str]:
    return dict(re.findall(r"<([^>]+)>;\s*rel=([\w-]+)", header))


def test_the_shell_preloads_every_module_of_the_ui_and_each_is_served(database: Path) -> None:
    api = Api(database)
    try:
        shell = api.get("/")
        linked = _linked(shell.headers["link"])
        modules = {f"/ui/{p.relative_to(UI_DIR).as_posix()}" for p in UI_DIR.glob("js/**/*.js")}
        assert "/ui/js/app.js" in modules and "/ui/js/dom.js" in modules
        assert set(linked) == modules
        assert set(linked.values()) == {"modulepreload"}
        for url in sorted(linked):
            served = api.get(url)
            assert served.status_code == 200, url
            assert served.headers["content-type"].startswith("text/javascript"), url
    finally:
        api.close()


def test_a_module_added_to_the_ui_is_preloaded_without_listing_it(tmp_path: Path) -> None:
    (tmp_path / "js" / "pages").mkdir(parents=True)
    for name in ("js/app.js", "js/pages/new-page.js", "js/notes.txt", "app.css"):
        (tmp_path / name).write_text("")
    assert _linked(preload_links(tmp_path)) == {
        "/ui/js/app.js": "modulepreload",
        "/ui/js/pages/new-page.js": "modulepreload",
    }
