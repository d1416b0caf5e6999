"""The gate's tests decide in the hook's own process unless a test asks for the warm one.

A hook run as Claude Code runs it would otherwise start a warm gate process
(``proctor.gate._warm``) that outlives the test; ``tests/gate/test_daemon.py`` starts its
own and stops them.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_warm_gate_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_GATE_DAEMON", "0")
