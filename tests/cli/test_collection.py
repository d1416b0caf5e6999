"""The command's process: no collections while a command's modules are imported, none of
the modules' objects walked by the interpreter's last collection at exit
(``proctor.cli.main``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from proctor.cli import main as cli_main

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_collections_pause_while_a_command_is_imported_and_resume_for_its_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(cli_main.COMMANDS, "probe", ("tests.cli.gc_probe_command", "probe"))
    monkeypatch.delitem(sys.modules, "tests.cli.gc_probe_command", raising=False)
    result = CliRunner().invoke(cli_main.cli, ["probe"], catch_exceptions=False)
    assert result.output.strip() == "import False run True"


def test_the_process_freezes_what_it_imported_before_it_exits() -> None:
    # A handler registered before main() runs after main()'s own (last in, first out).
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 1000))\n"
        "from proctor.cli.main import main\n"
        "sys.argv = ['proctor', '--version']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "frozen True"
