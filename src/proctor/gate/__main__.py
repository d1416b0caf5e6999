"""``python -m proctor.gate``: the Claude Code ``PreToolUse`` hook with the fewest imports.

Forwards the payload to a running ``proctor serve`` when there is one, else asks the warm
gate process (``_warm``); otherwise decides as ``proctor gate`` does (same output, same
exit statuses) and starts a warm gate process for the next calls. With options
(``--policy``, ``--project``, ``--no-daemon``) it is ``proctor gate`` with them.
"""

from __future__ import annotations

import atexit
import gc
import sys


def main() -> None:
    """Run the hook."""
    if len(sys.argv) > 1:
        from proctor.cli.gate import gate_command

        gate_command(prog_name="proctor gate")
        return
    run_hook()


def run_hook() -> None:
    """Answer one hook payload on stdin: the server, else the warm process, else alone.

    The process answers one payload and ends: no garbage collections run in it (they would
    walk the modules a decision imports, about a fifth of deciding alone), nor the
    interpreter's last one at exit."""
    gc.disable()
    atexit.register(gc.freeze)
    from proctor.gate._hook import forward

    payload = sys.stdin.buffer.read()
    answer = forward(payload)
    if answer is not None:
        sys.stdout.buffer.write(answer)
        sys.stdout.buffer.flush()
        return
    from proctor.gate._warm import answered, enabled, start

    if answered(payload):
        return
    from proctor.gate._alone import decide_alone

    try:
        decide_alone(payload, policy_path=None, project=None)
    finally:
        if enabled():
            start()


if __name__ == "__main__":
    main()
