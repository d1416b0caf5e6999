"""Import rows name their process; the next import marks those whose process died ``interrupted``.

Importers here are real processes holding a real import open (``begin_import`` and no
``finish_import``), so the rule is checked the way it is used: on SQLite by the process's
identity, on PostgreSQL by the lease the importer holds on the server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import select, update

from proctor._util.process import ProcessIdentity, still_running, this_process
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t

T = TypeVar("T")

_IMPORTER = textwrap.dedent(
    """
    import sys
    from proctor.store import open_store
    location = sys.argv[1]
    store = open_store(url=location) if "://" in location else open_store(location)
    print(store.begin_import(["/transcripts"], format_name=None, project=None), flush=True)
    sys.stdin.read()  # at work until its input closes, or until it is killed
    """
)


class Importer:
    """A process that began an import and has not finished it."""

    def __init__(self, location: str | Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _IMPORTER, str(location)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.import_id = self.process.stdout.readline().strip()
        assert self.import_id, "the importer did not start"

    def kill(self) -> None:
        self.process.kill()
        self._reap()

    def stop(self) -> None:
        """End without recording an outcome, as a crash between two writes would."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self._reap()

    def _reap(self) -> None:
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def importers(backend_url: str | Path) -> Iterator[Callable[[], Importer]]:
    started: list[Importer] = []

    def start() -> Importer:
        started.append(Importer(backend_url))
        return started[-1]

    yield start
    for importer in started:
        if importer.process.poll() is None:
            importer.kill()


def _status(store: SqlStore, import_id: str) -> str:
    with store._read() as c:
        return str(
            c.execute(
                select(t.imports.c.status).where(t.imports.c.import_id == import_id)
            ).scalar_one()
        )


def _eventually(probe: Callable[[], T], done: Callable[[T], bool], seconds: float = 15) -> T:
    """``probe()`` until ``done`` says yes: on PostgreSQL the server ends a dead client's
    session (and its locks) a moment after the client's socket closes."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)  # polling another process's state; there is no event to wait on


@pytest.mark.slow
def test_an_import_killed_mid_way_is_marked_interrupted_and_one_still_running_is_not(
    store: SqlStore, importers: Callable[[], Importer]
) -> None:
    killed, alive = importers(), importers()
    killed.kill()

    marked = _eventually(store.mark_interrupted_imports, bool)

    assert [record.import_id for record in marked] == [killed.import_id]
    assert marked[0].status == "interrupted" and marked[0].paths == ("/transcripts",)
    assert _status(store, killed.import_id) == "interrupted"
    assert _status(store, alive.import_id) == "running"
    assert [r.status for r in store.imports() if r.import_id == killed.import_id] == ["interrupted"]

    alive.stop()
    later = _eventually(store.mark_interrupted_imports, bool)
    assert [record.import_id for record in later] == [alive.import_id]
    assert store.mark_interrupted_imports() == []


def test_an_import_that_finishes_keeps_its_own_status(store: SqlStore) -> None:
    import_id = store.begin_import(["/transcripts"], format_name=None, project=None)
    assert store.mark_interrupted_imports() == [], "this very process is at work"
    [record] = store.imports()
    store.finish_import(import_id, replace(record, status="completed"), [])
    assert store.mark_interrupted_imports() == []
    assert _status(store, import_id) == "completed"


# -- SQLite: a running import is judged by its process's identity ----------------------


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


ME = this_process()
_CASES = {
    "whose process exited": lambda: {"owner_pid": _dead_pid()},
    "whose id another process took since": lambda: {
        "owner_start": (ME.start or "boot:1").rpartition(":")[0] + ":1"
    },
    "from an earlier boot of this host": lambda: {"owner_start": "another-boot:1"},
    "written before imports named their process": lambda: {
        "owner_host": None,
        "owner_pid": None,
        "owner_start": None,
    },
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="boot ids and start times")
@pytest.mark.parametrize("case", sorted(_CASES))
def test_on_sqlite_an_import_is_interrupted(case: str, tmp_path: Path) -> None:
    store = open_store(tmp_path / "proctor.db")
    import_id = store.begin_import(["/transcripts"], format_name=None, project=None)
    with store._write() as c:
        c.execute(update(t.imports).values(**_CASES[case]()))
    assert [r.import_id for r in store.mark_interrupted_imports()] == [import_id]
    store.close()


@pytest.mark.slow
def test_on_sqlite_an_import_of_another_host_or_of_a_live_process_is_left_running(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "proctor.db")
    mine = store.begin_import(["/a"], format_name=None, project=None)
    elsewhere = store.begin_import(["/b"], format_name=None, project=None)
    with store._write() as c:
        c.execute(
            update(t.imports)
            .where(t.imports.c.import_id == elsewhere)
            .values(owner_host=f"not-{socket.gethostname()}", owner_pid=_dead_pid())
        )
    assert store.mark_interrupted_imports() == []
    assert {_status(store, mine), _status(store, elsewhere)} == {"running"}
    store.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_zombie_process_is_not_running() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    identity = ProcessIdentity(socket.gethostname(), child.pid, None)
    try:
        state = _eventually(
            lambda: Path(f"/proc/{child.pid}/stat").read_text(), lambda s: ") Z" in s
        )
        assert ") Z" in state, "the child exited and nobody reaped it"
        assert still_running(identity) is False
    finally:
        child.wait()
    assert still_running(identity) is False


def test_this_process_is_running_and_another_host_cannot_be_judged() -> None:
    assert still_running(ME) is True
    assert still_running(ProcessIdentity(f"not-{socket.gethostname()}", os.getpid(), None)) is None
