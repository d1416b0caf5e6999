"""Shared fixtures: an isolated PROCTOR_HOME per test and the ../shared data folders.

``PROCTOR_TEST_BACKEND=postgresql`` runs the stores tests open on PostgreSQL instead of
SQLite files (``tests/backends.py``).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import backends, store_use

backends.install()

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO_ROOT.parent / "shared"))
TRANSCRIPTS_DIR = SHARED_DIR / "transcripts"
DATASETS_DIR = SHARED_DIR / "datasets"
EXAMPLES_DIR = REPO_ROOT / "examples"


@pytest.fixture(autouse=True)
def proctor_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own PROCTOR_HOME and cannot reach a real model endpoint or a
    database named in the shell's ``PROCTOR_DATABASE_URL``.

    Nor does it see a terminal size: pytest-xdist's workers have ``COLUMNS=80`` and
    ``LINES=24`` in their environment, a serial run has what the shell exported; a test
    that needs a width sets ``COLUMNS`` itself. On PostgreSQL the databases standing for
    files in ``tmp_path`` go with the test.
    """
    home = tmp_path / "proctor-home"
    monkeypatch.setenv("PROCTOR_HOME", str(home))
    monkeypatch.setenv("PROCTOR_ALLOW_MODEL_REQUESTS", "0")
    # No detached search indexer outlives a test (tests/search/test_handoff.py starts its own).
    monkeypatch.setenv("PROCTOR_BACKGROUND_INDEXING", "0")
    # Nor a warm gate process (tests/gate/test_daemon.py starts and stops its own).
    monkeypatch.setenv("PROCTOR_GATE_DAEMON", "0")
    monkeypatch.delenv("PROCTOR_DATABASE_URL", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    yield home
    if backends.DATABASES is not None:
        backends.DATABASES.drop_under(tmp_path)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop the PostgreSQL databases of wider fixtures and the templates: each pytest-xdist
    worker (and the controller) drops only what its own process made."""
    if backends.DATABASES is not None:
        backends.DATABASES.drop_all()
    backends.SQLITE_TEMPLATE.remove()
    store_use.write_record(session, exitstatus, on_postgres=backends.ON_POSTGRES)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[object]) -> Iterator[None]:
    """Which fixtures reach a store while they are set up (``tests/store_use.py``)."""
    with store_use.setting_up(fixturedef.argname):
        yield


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    store_use.note_report(report)


@pytest.fixture(scope="session")
def transcripts_dir() -> Path:
    """``../shared/transcripts``: real transcript files for adapter tests."""
    if not TRANSCRIPTS_DIR.is_dir():
        pytest.skip(f"{TRANSCRIPTS_DIR} is not available (set PROCTOR_SHARED_DIR)")
    return TRANSCRIPTS_DIR


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    """``../shared/datasets``: benchmark development splits."""
    if not DATASETS_DIR.is_dir():
        pytest.skip(f"{DATASETS_DIR} is not available (set PROCTOR_SHARED_DIR)")
    return DATASETS_DIR


def pytest_configure(config: pytest.Config) -> None:
    """No garbage collections while the suite is collected: importing every test module
    (and the library with it) allocates objects that all stay alive, and each full
    collection walks every one imported before (about 40 % of collecting the suite, in
    every worker of every pass). See ``pytest_collection_finish``. pytest-xdist's
    controller collects nothing: it keeps collecting garbage as usual."""
    # Module- and session-wide fixtures run outside ``proctor_home``'s monkeypatch: they must
    # not start a detached search indexer or a warm gate process either (one left running
    # from tests/cli/test_narrow_tables.py's store used ~10 CPU s of a pass).
    os.environ["PROCTOR_BACKGROUND_INDEXING"] = "0"
    os.environ["PROCTOR_GATE_DAEMON"] = "0"
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(
        config, "workerinput"
    )
    if not controller:
        gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collections resume once the suite is collected, with everything imported so far
    frozen: the modules live as long as the process, and the full collections the tests
    trigger need not walk them again (tests/rules and tests/transcript: 22 % less CPU)."""
    gc.enable()
    gc.freeze()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """On the PostgreSQL pass, a test file whose every test the SQLite pass's record leaves
    out (``tests/store_use.py``) is not imported at all: ``leave_out_tests_without_store``
    would deselect each of them after collection."""
    if backends.ON_POSTGRES and collection_path in store_use.files_without_store(REPO_ROOT):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what each test needs (``make check`` leaves out ``browser`` and ``postgres``);
    tests marked ``shared`` read ../shared directly; without it they skip, not fail."""
    backends.install()  # test modules imported during collection may have bound the real one
    if backends.ON_POSTGRES:
        store_use.leave_out_tests_without_store(config, items, REPO_ROOT)
    for item in items:
        mark_resources(item)
        leave_repetition_untraced(item)
    long_first(items)
    if SHARED_DIR.is_dir():
        return
    skip = pytest.mark.skip(reason=f"{SHARED_DIR} is not available (set PROCTOR_SHARED_DIR)")
    for item in items:
        if item.get_closest_marker("shared") is not None:
            item.add_marker(skip)


def long_first(items: list[pytest.Item]) -> None:
    """Modules holding a ``browser`` test run first, then those holding a ``slow`` one, each
    still whole: pytest-xdist hands out whole files in this order (``--dist loadfile
    --no-loadscope-reorder``, as ``make test`` runs it), so no worker starts a long module
    while the other has nothing left to do. The browser modules come one after another, so
    each worker starts Playwright and Chromium once for them (``tests/ui/conftest.py``)."""
    browser = {item.path for item in items if item.get_closest_marker("browser") is not None}
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: 0 if item.path in browser else 1 if item.path in slow else 2)


def mark_resources(item: pytest.Item) -> None:
    """``browser`` for a test that uses the ``playwright`` fixture (Chromium through Playwright),
    ``postgres`` for one that opens a PostgreSQL database: the ``postgresql`` parameter of
    the store contract suites (``backend_url``), or any test when the whole run is on
    PostgreSQL (``PROCTOR_TEST_BACKEND=postgresql``), ``property`` for a hypothesis test
    (``make fuzz`` runs them at full size: ``tests/properties.py``). Modules that reach a
    resource some other way carry the mark themselves (``tests/jobs/*_postgres.py``,
    ``local_model``)."""
    fixtures = getattr(item, "fixturenames", ())
    if "playwright" in fixtures:
        item.add_marker(pytest.mark.browser)
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        item.add_marker(pytest.mark.property)
    callspec = getattr(item, "callspec", None)
    on_postgres = callspec is not None and callspec.params.get("backend_url") == "postgresql"
    if on_postgres or backends.ON_POSTGRES:
        item.add_marker(pytest.mark.postgres)


UNTRACED_PROPERTIES = ("tests/rules/", "tests/sources/")
"""Folders whose hypothesis property tests run with coverage paused (below)."""


def leave_repetition_untraced(item: pytest.Item) -> None:
    """``no_cover`` (pytest-cov pauses coverage while the test runs; the test itself runs as
    before) for the hypothesis property loops of ``tests/rules`` and ``tests/sources``:
    hundreds to thousands of generated cases each, through lines the example tests of
    those folders already run, which under the tracer nearly doubled tests/rules' CPU.
    Measured with per-test coverage contexts over tests/rules, tests/sources and
    tests/fuzz: 20 lines (0.04 points of the report's TOTAL) were reached by these loops
    alone. The modules they exercise are imported when their test files are collected,
    with coverage on. The fuzz slice stays traced: it is the only suite in those folders
    that drives the API's intake and import paths (thousands of lines no other test there
    reaches), and whether the rest of the suite reaches them was not yet measured."""
    relative = item.path.relative_to(REPO_ROOT).as_posix()
    loop = getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
    if loop and relative.startswith(UNTRACED_PROPERTIES):
        item.add_marker(pytest.mark.no_cover)
