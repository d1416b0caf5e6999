"""The ``proctor`` executable's entry point.

``proctor gate`` without options runs before every tool call of an agent (a Claude Code
``PreToolUse`` hook), so it goes straight to the hook's lean path (``python -m
proctor.gate``: the server, else the warm gate process, else deciding alone) without
importing click and the command group; the answer, stderr and exit status are the same.
Everything else is the click group of ``proctor.cli.main``.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``proctor`` with the process's arguments."""
    if sys.argv[1:] == ["gate"]:
        from proctor.gate.__main__ import run_hook

        run_hook()
        return
    from proctor.cli.main import main as proctor

    proctor()
