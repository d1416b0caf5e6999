"""The command's process: no collections while a command's modules are imported, none of
the modules' objects walked by the interpreter's last collection at exit
(``proctor.cli.main``)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from proctor._util import collector
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


def test_serve_builds_its_app_without_collections_and_freezes_it(
    monkeypatch: pytest.MonkeyPatch, proctor_home: Path
) -> None:
    import uvicorn

    import proctor.api

    seen: dict[str, object] = {}

    def create_app(*_args: object, **_kwargs: object) -> SimpleNamespace:
        seen["collecting while built"] = gc.isenabled()
        return SimpleNamespace(state=SimpleNamespace())

    def run(app: SimpleNamespace, **_kwargs: object) -> None:
        seen["collecting while served"] = gc.isenabled()
        seen["frozen"] = gc.get_freeze_count()
        seen["what loads later is frozen"] = collector._long_lived

    monkeypatch.setattr(proctor.api, "create_app", create_app)
    monkeypatch.setattr(uvicorn, "run", run)
    # serve marks its process long-lived (what loads later is frozen): undone after the
    # test, or every later test of this process would freeze what it loads.
    monkeypatch.setattr(collector, "_long_lived", False)
    gc.unfreeze()
    try:
        result = CliRunner().invoke(cli_main.cli, ["serve", "--port", "1"], catch_exceptions=False)
    finally:
        gc.unfreeze()
    assert result.exit_code == 0, result.output
    assert seen["collecting while built"] is False
    assert seen["collecting while served"] is True
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 1000
    assert seen["what loads later is frozen"] is True  # only a served app's process
    assert collector._long_lived  # and what searching and routers load later


def test_the_gate_hook_process_collects_nothing(proctor_home: Path) -> None:
    payload = (REPO_ROOT / "tests/gate/fixtures/pre_tool_use_read.json").read_bytes()
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 0, "
        "file=sys.stderr))\n"
        "sys.argv = ['proctor-gate']\n"
        "from proctor.gate.__main__ import main\n"
        "main()\n"
    )
    env = {**os.environ, "PROCTOR_HOME": str(proctor_home), "PROCTOR_GATE_DAEMON": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=payload,
        capture_output=True,
        cwd=REPO_ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().strip().splitlines()[-1] == "False True"
