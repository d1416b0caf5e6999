"""The hook deciding in its own process: payload bytes in, the agent's answer printed.

The session's live state is kept between hook processes (``_kept``): a process reads only
what the log gained since the previous one.

What ``proctor gate`` and ``python -m proctor.gate`` do when no server answers (or with
``--policy`` / ``--project``). Kept out of the command line module so the lean hook never
imports ``click``. Every failure is one line on stderr and exit status 1, which Claude Code
treats as a non-blocking error (exit 2 would block the call).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

from proctor.errors import ProctorError
from proctor.gate._lean import deciding_alone

EXIT_NOT_DECIDED = 1
"""The hook could not decide; the agent goes on as if there were no hook."""


def fail(message: str) -> NoReturn:
    """Say why the call was not checked and exit 1."""
    print(f"proctor gate: {message}", file=sys.stderr, flush=True)
    sys.exit(EXIT_NOT_DECIDED)


def warn(message: str) -> None:
    """Say what could not be read (the decision goes on)."""
    print(f"proctor gate: warning: {message}", file=sys.stderr, flush=True)


def decide_alone(data: bytes, *, policy_path: Path | None, project: str | None) -> None:
    """Decide in this process on the payload ``data`` and print the agent's answer."""
    with deciding_alone():  # the rules' patterns come compiled from $PROCTOR_HOME/cache/gate
        _decide(data, policy_path=policy_path, project=project)


def _decide(data: bytes, *, policy_path: Path | None, project: str | None) -> None:
    # Imported here, inside deciding_alone: these imports are what it makes cheaper.
    from proctor._util.paths import proctor_home
    from proctor.gate._claude_code import PRE_TOOL_USE, gate_request, hook_output, parse_hook_input
    from proctor.gate._kept import decide_keeping

    try:
        hook = parse_hook_input(data)
        if hook.hook_event_name != PRE_TOOL_USE:
            return
        decision = decide_keeping(
            gate_request(hook, project=project),
            cache=proctor_home() / "cache" / "gate",
            policy_path=policy_path,
            warn=warn,
        )
    except ProctorError as exc:
        fail(str(exc))
    except Exception as exc:  # a bug in a rule must not block the agent; say what it was
        fail(f"internal error, the call was not checked: {type(exc).__name__}: {exc}")
    output = hook_output(decision)
    if output is not None:
        import orjson

        # Bytes, so a reason with non-ASCII text is valid UTF-8 JSON whatever the locale.
        sys.stdout.buffer.write(orjson.dumps(output) + b"\n")
        sys.stdout.buffer.flush()
