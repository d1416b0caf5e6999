"""A database URL handed to ``open_store`` as a path is refused with what to do, instead
of becoming a SQLite file in a folder named after the URL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from proctor.errors import StoreError
from proctor.store import open_store

URLS = [
    "postgresql://user:secret@127.0.0.1:5432/proctor",
    "postgresql+psycopg://127.0.0.1/proctor",
    "sqlite:///tmp/proctor.db",
]


@pytest.fixture(autouse=True)
def _in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' harness (tests/backends.py) lays a template store down where a path
    points before Proctor opens it: relative to an empty folder, not the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("url", URLS)
def test_a_url_given_as_a_path_is_refused_naming_the_url_parameter(url: str) -> None:
    with pytest.raises(StoreError, match=r"as a file path; pass it as url="):
        open_store(url)


def test_the_refusal_does_not_repeat_the_urls_password() -> None:
    with pytest.raises(StoreError) as refused:
        open_store("postgresql://user:secret@127.0.0.1/proctor")
    assert "secret" not in str(refused.value)


def test_nothing_is_made_where_the_url_would_have_been_a_path(tmp_path: Path) -> None:
    """In a process of its own (the tests' harness makes stores from a template)."""
    code = (
        "import sys\n"
        "from proctor.store import open_store\n"
        "for url in sys.argv[1:]:\n"
        "    try:\n"
        "        open_store(url)\n"
        "    except Exception as error:\n"
        "        print(type(error).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *URLS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split() == ["StoreError"] * len(URLS)
    assert list(tmp_path.iterdir()) == []
