"""The PostgreSQL pass leaves out only the tests the SQLite pass saw never reach a store
(tests/store_use.py): a test that reached one directly or asks for a fixture that did, a test
without a record, and the tests of a file changed since the record all run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import store_use


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "store-use"
    folder.mkdir()
    monkeypatch.setenv("PROCTOR_TEST_STORE_USE", str(folder))
    return folder


def _tree(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("def test_x(): pass\n")
        os.utime(root / name, (1_000_000, 1_000_000))


def _complete(
    folder: Path,
    collected: dict[str, list[str]],
    *,
    both_backends: bool = False,
    **reached: list[str],
) -> None:
    # As pytest-xdist writes it: each worker collected the suite, the controller nothing.
    for worker, tests in (("gw0", reached.get("tests", [])), ("gw1", [])):
        (folder / f"reached-{worker}.json").write_text(
            json.dumps(
                {
                    "tests": tests,
                    "fixtures": reached.get("fixtures", []) if worker == "gw0" else [],
                    "collected": collected,
                }
            )
        )
    (folder / "reached-main.json").write_text(
        json.dumps({"tests": [], "fixtures": [], "collected": {}})
    )
    (folder / "complete.json").write_text(
        json.dumps({"whole": True, "both_backends": both_backends})
    )


def test_only_tests_that_never_reached_a_store_are_left_out(record: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _tree(root, "tests/a.py", "tests/b.py", "tests/c.py", "tests/d.py")
    _complete(
        record,
        {
            "tests/a.py::test_x": ["proctor_home"],
            "tests/b.py::test_x": ["proctor_home"],
            "tests/b.py::test_y[1]": ["proctor_home"],
            "tests/b.py::test_y[2]": ["proctor_home"],
            "tests/c.py::test_x": ["proctor_home", "seeded_server"],
            "tests/c.py::test_y": ["proctor_home"],
            "tests/d.py::test_x": ["proctor_home"],
        },
        tests=["tests/b.py::test_y[2]"],
        fixtures=["seeded_server"],
    )
    assert store_use.tests_without_store(root) == {
        "tests/a.py::test_x",
        "tests/b.py::test_x",
        "tests/b.py::test_y[1]",
        "tests/c.py::test_y",
        "tests/d.py::test_x",
    }
    # The tests of a file changed after the record was written run again.
    (root / "tests/d.py").write_text("def test_y(): pass\n")
    assert "tests/d.py::test_x" not in (store_use.tests_without_store(root) or set())


def test_only_files_whose_every_test_is_left_out_are_not_collected(
    record: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_use, "_files_left_out", {})
    root = tmp_path / "repo"
    _tree(root, "tests/a.py", "tests/b.py", "tests/c.py", "tests/d.py")
    _complete(
        record,
        {
            "tests/a.py::test_x": ["proctor_home"],
            "tests/a.py::test_y[1]": ["proctor_home"],
            "tests/b.py::test_x": ["proctor_home"],
            "tests/b.py::test_y": ["proctor_home"],
            "tests/c.py::test_x": ["seeded_server"],
            "tests/d.py::test_x": ["proctor_home"],
        },
        tests=["tests/b.py::test_y"],
        fixtures=["seeded_server"],
    )
    # d.py changed after the record: its tests run, so it is collected.
    (root / "tests/d.py").write_text("def test_y(): pass\n")
    assert store_use.files_without_store(root) == {root / "tests/a.py"}
    # Without a whole record every file is collected.
    monkeypatch.setattr(store_use, "_files_left_out", {})
    (record / "complete.json").unlink()
    assert store_use.files_without_store(root) == frozenset()


def test_contract_tests_left_out_only_when_the_sqlite_pass_ran_them_on_both_backends(
    record: Path, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    _tree(root, "tests/search/test_a.py", "tests/api/test_b.py")
    collected = {
        "tests/search/test_a.py::test_x[sqlite]": ["backend_url", "store"],
        "tests/search/test_a.py::test_x[postgresql]": ["backend_url", "store"],
        "tests/api/test_b.py::test_y": ["store"],
    }
    reached = [*collected]
    _complete(record, collected, tests=reached, both_backends=True)
    assert store_use.tests_without_store(root) == {
        "tests/search/test_a.py::test_x[sqlite]",
        "tests/search/test_a.py::test_x[postgresql]",
    }
    # A SQLite pass without the server skipped the postgresql parameters: all run.
    _complete(record, collected, tests=reached, both_backends=False)
    assert store_use.tests_without_store(root) == set()


def test_without_a_whole_record_everything_runs(record: Path, tmp_path: Path) -> None:
    (record / "reached-gw0.json").write_text(
        json.dumps({"tests": [], "fixtures": [], "collected": {"tests/a.py::test_x": []}})
    )
    assert store_use.tests_without_store(tmp_path) is None
    # A record it cannot read leaves everything to run too.
    (record / "complete.json").write_text(json.dumps({"whole": True}))
    (record / "reached-gw1.json").write_text("{not json")
    assert store_use.tests_without_store(tmp_path) is None


def test_a_fixture_set_up_when_a_store_is_reached_is_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store_use, "_reached", set())
    monkeypatch.setattr(store_use, "_store_fixtures", set())
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/x/test_y.py::test_z[a (b)] (setup)")
    with store_use.setting_up("module_store"):
        store_use.note_store_use()
    store_use.note_store_use()
    assert store_use._reached == {"tests/x/test_y.py::test_z[a (b)]"}
    assert store_use._store_fixtures == {"module_store"}
