"""Several ``proctor`` commands in one process, for fixtures that arrange a store with the
CLI: each command as the shell would run it (its own exit status, its errors), without
one interpreter start and import of the CLI per command (about half a second of CPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence

_RUN = """
import json, sys
from proctor.cli.main import cli
for args in json.loads(sys.argv[1]):
    try:
        cli.main(args, prog_name="proctor")
    except SystemExit as ended:
        if ended.code not in (0, None):
            print(f"proctor {' '.join(args)}: exit status {ended.code}", file=sys.stderr)
            raise
"""


def run_commands(env: Mapping[str, str], commands: Sequence[Sequence[str]]) -> str:
    """Run each of ``commands`` (``proctor``'s arguments) in turn, in one process with
    ``env``; fail at the first that fails. Returns their output."""
    done = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps([list(c) for c in commands])],
        env=dict(env),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, (commands, done.stdout, done.stderr)
    return done.stdout
