"""Where the store lives: ``PROCTOR_DATABASE_URL`` selects a server, else the home's file."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from proctor.errors import ConfigError
from proctor.store import database_exists, database_location
from tests.backends import open_real_store as open_store


def test_without_a_database_url_the_store_is_the_file_in_proctor_home(proctor_home: Path) -> None:
    file = proctor_home / "proctor.db"
    assert (database_location(), database_exists()) == (str(file), False)
    store = open_store()
    try:
        assert (store.dialect, store.description) == ("sqlite", str(file))
    finally:
        store.close()
    assert database_exists() and file.is_file()


@pytest.mark.parametrize("backend_url", ["postgresql"], indirect=True)
def test_a_database_url_in_the_environment_selects_that_server(
    backend_url: str, proctor_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_DATABASE_URL", backend_url)
    store = open_store()
    try:
        assert store.dialect == "postgresql"
        assert store.counts().conversations == 0
    finally:
        store.close()
    url = make_url(backend_url)
    shown = database_location()
    assert url.password and f":{url.password}@" not in shown and ":***@" in shown
    assert shown.endswith(f"/{url.database}")
    assert database_exists()
    assert not proctor_home.exists(), "no SQLite file is made beside a server"


def test_an_explicit_file_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    store = open_store(tmp_path / "own.db")
    try:
        assert store.dialect == "sqlite"
    finally:
        store.close()


@pytest.mark.parametrize("value", ["not a url", "://nothing"])
def test_a_malformed_database_url_is_refused_saying_what_to_set(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_DATABASE_URL", value)
    with pytest.raises(ConfigError, match="PROCTOR_DATABASE_URL is not a database URL"):
        open_store()
