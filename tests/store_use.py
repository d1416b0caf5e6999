"""Which tests reach a store, so the PostgreSQL pass runs only those.

``make test`` runs every suite on SQLite, then again with each store a PostgreSQL database
(``tests/backends.py``). A test that never opens a store, names a database to a subprocess
or copies one runs the same code in both passes: the adapters, the rules, the transcript
types. The SQLite pass therefore records, per test, whether it reached the store through
``tests/backends.py`` (every such path goes through it: ``open_store`` is swapped wherever
it is bound, subprocesses get their database from ``database_env``), directly or through a
fixture that did while it was set up, or was skipped (a test may skip on SQLite and run only
on PostgreSQL). The PostgreSQL pass then leaves out the tests recorded as never reaching one
and asking for no fixture that did, and the tests that already ran on both backends in the
SQLite pass (the contract suites' ``backend_url`` parameters, when that pass had a
PostgreSQL server).

The record is trusted only when it is whole and current: written by a SQLite pass that
collected the whole suite (no ``-k``, ``-m`` or paths) and passed; a test it did not
collect, or one whose file changed after it was written, runs on PostgreSQL regardless.
Without a record (``make pytest-postgresql`` alone), everything runs.

``PROCTOR_TEST_STORE_USE`` names the folder of the record; unset, nothing is recorded or
left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_FOLDER_VARIABLE = "PROCTOR_TEST_STORE_USE"
_COMPLETE = "complete.json"
_BOTH_BACKENDS_FIXTURE = "backend_url"
"""The contract suites' fixture that runs a test on SQLite and on PostgreSQL in one pass."""

_reached: set[str] = set()
_store_fixtures: set[str] = set()
_setting_up: list[str] = []


def record_folder() -> Path | None:
    """The folder of the record, when this run keeps or reads one."""
    raw = os.environ.get(_FOLDER_VARIABLE, "").strip()
    return Path(raw) if raw else None


def note_store_use() -> None:
    """Record that the running test reached a store, and the fixtures being set up when it
    did: a module- or session-wide fixture sets up once, during the first test that asks
    for it, and every file whose tests ask for it reaches the store through it."""
    current = os.environ.get("PYTEST_CURRENT_TEST")
    if current:
        # pytest writes "<node id> (<phase>)".
        _reached.add(current.rsplit(" (", 1)[0])
    _store_fixtures.update(_setting_up)


@contextmanager
def setting_up(fixture: str) -> Iterator[None]:
    """Mark ``fixture`` as being set up for the block (``pytest_fixture_setup``)."""
    _setting_up.append(fixture)
    try:
        yield
    finally:
        _setting_up.pop()


def note_report(report: pytest.TestReport) -> None:
    """A skipped test counts as reaching a store: it may run only on PostgreSQL."""
    if report.skipped:
        _reached.add(report.nodeid)


def _worker_file(folder: Path) -> Path:
    return folder / f"reached-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.json"


def write_record(session: pytest.Session, exitstatus: int, *, on_postgres: bool) -> None:
    """Each process writes the tests that reached a store, the fixtures they reached it
    through, and each collected test's fixtures (pytest-xdist's workers collect the suite,
    its controller does not); the controller (or a serial run) marks the record whole when
    the pass was."""
    folder = record_folder()
    if folder is None or on_postgres:
        return
    folder.mkdir(parents=True, exist_ok=True)
    reached = {
        "tests": sorted(_reached),
        "fixtures": sorted(_store_fixtures),
        "collected": {
            item.nodeid: sorted(getattr(item, "fixturenames", ())) for item in session.items
        },
    }
    _worker_file(folder).write_text(json.dumps(reached))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    option = session.config.option
    whole = (
        exitstatus == 0
        and not option.keyword
        and not option.markexpr
        and session.config.args_source != pytest.Config.ArgsSource.ARGS
    )
    if whole:
        both = bool(os.environ.get("PROCTOR_TEST_POSTGRES_URL", "").strip())
        (folder / _COMPLETE).write_text(json.dumps({"whole": True, "both_backends": both}))


def tests_without_store(root: Path) -> set[str] | None:
    """Tests the whole, current record shows never reached a store, or ran on both backends
    already (``backend_url``, with the server there); None without one (or with one that
    cannot be read: then everything runs)."""
    record = _read_record(root)
    return None if record is None else record[0]


def files_without_store(root: Path) -> frozenset[Path]:
    """Test files (absolute paths) every test of which the record leaves out: the PostgreSQL
    pass need not import and collect them only to deselect all they hold (about a third of
    its collection). A file the record did not collect, or changed since, is not among them.
    Read once per process: ``pytest_ignore_collect`` asks for every path of the suite."""
    if root not in _files_left_out:
        record = _read_record(root)
        files: frozenset[Path] = frozenset()
        if record is not None:
            left_out, collected = record
            by_file: dict[str, bool] = {}
            for nodeid in collected:
                name = nodeid.split("::", 1)[0]
                by_file[name] = by_file.get(name, True) and nodeid in left_out
            files = frozenset(root / name for name, none_run in by_file.items() if none_run)
        _files_left_out[root] = files
    return _files_left_out[root]


_files_left_out: dict[Path, frozenset[Path]] = {}


def _read_record(root: Path) -> tuple[set[str], set[str]] | None:
    """The tests the record leaves out and every test it collected (see above)."""
    folder = record_folder()
    complete = folder / _COMPLETE if folder is not None else None
    if folder is None or complete is None or not complete.is_file():
        return None
    try:
        written = complete.stat().st_mtime
        both_backends = json.loads(complete.read_text()).get("both_backends") is True
        collected: dict[str, set[str]] = {}
        tests: set[str] = set()
        store_fixtures: set[str] = set()
        for path in folder.glob("reached-*.json"):
            reached = json.loads(path.read_text())
            tests.update(reached["tests"])
            store_fixtures.update(reached["fixtures"])
            for name, names in reached["collected"].items():
                collected.setdefault(name, set()).update(names)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    unchanged: dict[str, bool] = {}

    def file_unchanged(nodeid: str) -> bool:
        name = nodeid.split("::", 1)[0]
        if name not in unchanged:
            path = root / name
            unchanged[name] = path.is_file() and path.stat().st_mtime < written
        return unchanged[name]

    def left_out(nodeid: str, fixtures: set[str]) -> bool:
        if both_backends and _BOTH_BACKENDS_FIXTURE in fixtures:
            return True
        return nodeid not in tests and store_fixtures.isdisjoint(fixtures)

    return {
        nodeid
        for nodeid, fixtures in collected.items()
        if left_out(nodeid, fixtures) and file_unchanged(nodeid)
    }, set(collected)


def leave_out_tests_without_store(
    config: pytest.Config, items: list[pytest.Item], root: Path
) -> None:
    """On the PostgreSQL pass, deselect the tests recorded as never reaching a store or as
    already run on both backends."""
    unused = tests_without_store(root)
    if not unused:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (dropped if item.nodeid in unused else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
