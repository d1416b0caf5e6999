"""SQLite's allocation count is turned off before a server's first connection, and only
when no SQLite object exists (``proctor.store._sqlite_library``).

Each case runs in a fresh interpreter: the setting is the process's, and this test
process holds open connections."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the setting is made on Linux only"
)

SRC = Path(__file__).resolve().parents[2] / "src"


def _run(code: str, home: Path | None = None) -> dict[str, object]:
    """The JSON object ``code`` prints last, run in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    if home is not None:
        env["PROCTOR_HOME"] = str(home)
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


# A full-text table ranked on two threads at once, as a served search does.
WORK = """
import sqlite3, tempfile, threading, os
folder = tempfile.mkdtemp()
path = os.path.join(folder, "t.db")
with sqlite3.connect(path) as db:
    db.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
    db.executemany("INSERT INTO f(body) VALUES (?)", [(f"git commit {i} note",) for i in range(2000)])
found = []
def rank():
    with sqlite3.connect(path) as db:
        found.append(db.execute(
            "SELECT count(*) FROM (SELECT rowid FROM f WHERE f MATCH 'git AND commit' "
            "ORDER BY bm25(f) LIMIT 10)").fetchone()[0])
threads = [threading.Thread(target=rank) for _ in range(2)]
for thread in threads: thread.start()
for thread in threads: thread.join()
"""


def test_a_fresh_process_turns_the_count_off_and_sqlite_still_works() -> None:
    before = """
        from proctor.store import counts_allocations, stop_counting_allocations
        before = counts_allocations()
        turned = stop_counting_allocations()
        """
    after = """
        import json
        print(json.dumps({"before": before, "turned": turned, "after": counts_allocations(),
                          "found": found, "again": stop_counting_allocations()}))
        """
    result = _run(textwrap.dedent(before) + WORK + textwrap.dedent(after))
    assert result == {
        "before": True,
        "turned": True,
        "after": False,
        "found": [10, 10],
        "again": True,
    }


def test_an_open_connection_leaves_the_count_on_and_the_connection_working() -> None:
    result = _run(
        """
        import sqlite3
        held = sqlite3.connect(":memory:")
        held.execute("CREATE TABLE t (x)")
        from proctor.store import counts_allocations, stop_counting_allocations
        turned = stop_counting_allocations()
        held.execute("INSERT INTO t VALUES (1)")
        rows = held.execute("SELECT x FROM t").fetchall()
        import json
        print(json.dumps({"turned": turned, "counting": counts_allocations(), "rows": rows}))
        """
    )
    assert result == {"turned": False, "counting": True, "rows": [[1]]}


def test_a_second_call_with_connections_open_does_not_shut_sqlite_down() -> None:
    """Once the count is off it cannot tell whether objects are open: the second call must
    not shut the library down under the connection made between the two."""
    result = _run(
        """
        import sqlite3
        from proctor.store import stop_counting_allocations
        first = stop_counting_allocations()
        held = sqlite3.connect(":memory:")
        held.execute("CREATE TABLE t (x)")
        second = stop_counting_allocations()
        held.execute("INSERT INTO t VALUES (2)")
        import json
        print(json.dumps({"first": first, "second": second,
                          "rows": held.execute("SELECT x FROM t").fetchall()}))
        """
    )
    assert result == {"first": True, "second": True, "rows": [[2]]}


# Whether SQLite counted allocations where a server command opens its first store
# (``proctor mcp``) or starts serving (``proctor serve``, whose app opens stores later),
# and whether sqlite-vec (registered as the search package is imported) still loads.
AT_START = """
import json, sys
import proctor.store, uvicorn
from proctor.store import counts_allocations

def started(*args, **kwargs):
    import sqlite3
    from proctor.search._vectors import _answers, register_auto_extension
    vec = register_auto_extension() and _answers(sqlite3.connect(":memory:"))
    print(json.dumps({"counting": counts_allocations(), "sqlite_vec": vec}))
    sys.stdout.flush()
    raise SystemExit(0)

proctor.store.open_store = started
uvicorn.run = started
from proctor.cli.main import cli
cli.main([{arguments}], prog_name="proctor", standalone_mode=False)
"""


@pytest.mark.parametrize(
    "arguments",
    ['"serve", "--port", "1"', '"mcp", "--conversation", "c1"'],
    ids=["serve", "mcp"],
)
def test_the_servers_turn_the_count_off_before_their_first_store(
    arguments: str, tmp_path: Path
) -> None:
    result = _run(AT_START.replace("{arguments}", arguments), home=tmp_path)
    installed = importlib.util.find_spec("sqlite_vec") is not None
    assert result == {"counting": False, "sqlite_vec": installed}
