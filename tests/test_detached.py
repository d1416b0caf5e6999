"""A detached helper process is kept until it ends, then reaped: no zombie, no warning."""

from __future__ import annotations

import gc
import os
import sys
import warnings

import pytest

from proctor._util import detached
from proctor._util.detached import start_detached


@pytest.mark.slow
def test_a_detached_process_dropped_while_it_runs_raises_no_resource_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        start_detached([sys.executable, "-c", "import time; time.sleep(5)"], os.environ)
        gc.collect()  # the caller kept no reference: the module did
    running = detached._started[-1]
    assert running.poll() is None
    assert os.getsid(running.pid) == running.pid  # a session of its own
    running.kill()
    running.wait()


def test_the_next_start_reaps_the_processes_that_ended() -> None:
    first = start_detached([sys.executable, "-c", "pass"], os.environ)
    first.wait()
    second = start_detached([sys.executable, "-c", "pass"], os.environ)
    assert first not in detached._started and second in detached._started
    second.wait()
