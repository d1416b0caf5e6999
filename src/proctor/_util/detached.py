"""Starting a detached helper process (a webhook deliverer, a search indexer) and reaping it.

A short command hands work to a process that outlives it; a long-running one (``proctor
watch``, a test session) may start several. Each started process is kept here until it
has ended, so it is reaped (no zombie) and its ``Popen`` is never dropped while the child
still runs (which Python reports as a ResourceWarning).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

_started: list[subprocess.Popen[bytes]] = []


def start_detached(argv: Sequence[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own, with no terminal input or output."""
    _started[:] = [process for process in _started if process.poll() is None]
    process = subprocess.Popen(
        list(argv),
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _started.append(process)
    return process
