"""A ``proctor ingest --jobs 3`` (the importer and two workers) killed with SIGKILL leaves
no process behind, and the next import marks its row ``interrupted`` and says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from tests.backends import database_env, database_exists, raw_connection
from tests.conftest import EXAMPLES_DIR
from tests.ingest.copies import ingest_command, session_copies
from tests.ingest.polling import ConversationCounter

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="finds the process group's members in /proc"
)

COPIES = 300


def _group(pgid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process in process group ``pgid``."""
    members: list[tuple[int, str]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        state, _ppid, group = stat[stat.rfind(")") + 2 :].split()[:3]
        if int(group) == pgid:
            members.append((int(entry.name), state))
    return members


def _living(pgid: int) -> list[int]:
    """Members of the group that still run (a zombie has ended; only its exit status waits)."""
    return [pid for pid, state in _group(pgid) if state not in ("Z", "X")]


def _imports(db: Path) -> list[tuple[str, str]]:
    if not database_exists(db):
        return []
    try:
        with raw_connection(db, read_only=True) as connection:
            rows = connection.execute(
                text("SELECT import_id, status FROM imports ORDER BY started_at")
            )
            return [(str(a), str(b)) for a, b in rows]
    except DBAPIError:
        return []  # the schema is not there yet


def _conversations(db: Path) -> int:
    if not database_exists(db):
        return 0
    try:
        with raw_connection(db, read_only=True) as connection:
            return int(connection.execute(text("SELECT count(*) FROM conversations")).scalar_one())
    except DBAPIError:
        return 0


def _until(done: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.02)  # polling other processes' state; there is no event to wait on


@pytest.mark.slow
def test_a_killed_import_leaves_no_worker_and_is_marked_interrupted_by_the_next(
    tmp_path: Path, transcripts_dir: Path
) -> None:
    (tmp_path / "corpus").mkdir()
    corpus = session_copies(transcripts_dir, tmp_path / "corpus", COPIES)
    home = tmp_path / "home"
    db = home / "proctor.db"
    env = {**os.environ, "PROCTOR_HOME": str(home), **database_env(home)}
    command = ingest_command(str(corpus), "--json")
    importer = subprocess.Popen(
        [*command, "--jobs", "3"],  # the importer is one of the three readers
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the group is the import
    )
    group = importer.pid
    try:
        with ExitStack() as stack:
            counted = ConversationCounter(db, stack)
            _until(
                # The count first: one query, where a look at the group reads every
                # process's /proc/PID/stat.
                lambda: counted() >= 3 and len(_living(group)) >= 3,
                120,
                "the import and its two workers at work",
            )
        [(killed_id, status)] = _imports(db)
        assert status == "running"
        os.kill(importer.pid, signal.SIGKILL)  # the importer only: its workers must follow
        importer.wait()
        _until(lambda: not _living(group), 10, f"the workers of the killed import: {_group(group)}")
    finally:
        for pid in _living(group):
            os.kill(pid, signal.SIGKILL)
    assert 0 < _conversations(db) < COPIES, "the import was killed part-way"

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)

    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert [(r["import_id"], r["status"]) for r in report["interrupted"]] == [
        (killed_id, "interrupted")
    ]
    assert _imports(db) == [(killed_id, "interrupted"), (report["import_id"], "completed")]
    assert _conversations(db) == COPIES

    # Interrupted imports are looked for in the store, whatever is imported: one file of the
    # corpus (unchanged) instead of all 300 read and compared again.
    one_file = ingest_command(str(corpus / "session-0000.jsonl"))
    text_again = subprocess.run(one_file, env=env, capture_output=True, text=True, timeout=600)
    assert text_again.returncode == 0, text_again.stderr
    assert "was interrupted" not in text_again.stdout, "an interruption is reported once"


_ORPHAN = """
import os, sys, time
from proctor.ingest import _reading
if "--no-kernel-signal" in sys.argv:
    _reading._arm_parent_death_signal = lambda: None
parent = os.getpid()
child = os.fork()
if child == 0:
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 1)  # the test reads the parent's output to its end
    os.dup2(quiet, 2)
    _reading.end_with_parent(parent)
    while True:
        time.sleep(60)  # a worker waiting for work that will never come
print(child, flush=True)
os._exit(0)  # the parent dies at once, as a killed one would
"""


@pytest.mark.parametrize("how", ["--kernel-signal", "--no-kernel-signal"])
def test_a_worker_ends_when_its_parent_ends(how: str) -> None:
    parent = subprocess.run(
        [sys.executable, "-c", _ORPHAN, how], capture_output=True, text=True, timeout=60
    )
    worker = int(parent.stdout.strip())

    def gone() -> bool:
        try:
            stat = Path(f"/proc/{worker}/stat").read_text()
        except OSError:
            return True
        return stat[stat.rfind(")") + 2] in "ZX"

    try:
        _until(gone, 10, f"worker {worker} of a parent that died")
    finally:
        if not gone():
            os.kill(worker, signal.SIGKILL)


_CRASHED_IMPORT = """
import os
from proctor.store import open_store
store = open_store()
print(store.begin_import(["/transcripts"], format_name=None, project=None), flush=True)
os._exit(1)  # no outcome recorded, as after a crash
"""


@pytest.mark.slow
def test_the_next_ingest_names_the_interrupted_import(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "PROCTOR_HOME": str(home), **database_env(home)}
    crashed = subprocess.run(
        [sys.executable, "-c", _CRASHED_IMPORT], env=env, capture_output=True, text=True
    )
    import_id = crashed.stdout.strip()
    assert crashed.returncode == 1 and import_id, crashed.stderr

    result = subprocess.run(
        [sys.executable, "-m", "proctor.cli.main", "ingest", str(EXAMPLES_DIR)],
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    assert f"Import {import_id[:8]} of /transcripts (started " in result.stdout
    assert "was interrupted: its process stopped before it finished" in result.stdout
    assert dict(_imports(home / "proctor.db"))[import_id] == "interrupted"
