"""The heartbeat loop ``proctor serve`` hosts: due plans run while the server is up (HB-3).

The same pass as ``proctor worker``: every ``interval`` seconds, if the supervisor app is
on, claim the due plans (with a lease, so a separate worker never runs a plan twice) and
run them one after the other. When the server stops, a review the loop is running is
paused — as Ctrl-C pauses it in the CLI — and the plan's lease expires, so the plan is
claimed again later.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from proctor._util.clock import utcnow
from proctor.errors import ProctorError

if TYPE_CHECKING:
    from proctor.api._quiet import RequestActivity
    from proctor.store import SqlStore

logger = logging.getLogger("proctor.api.heartbeat")

FIRST_PASS_DELAY_SECONDS = 2.0
"""The first pass starts this long after the server (or after one interval, if shorter)."""


@dataclass
class HeartbeatState:
    """What the loop did lately, for ``GET /api/heartbeat``."""

    interval: float
    """Seconds between passes."""
    owner: str
    """This process as a lease owner (``host:pid``)."""
    ticks: int = 0
    """Passes made since the server started."""
    last_tick_at: datetime | None = None
    """When the last pass ended."""
    last_app_enabled: bool | None = None
    """Whether the app switch was on at the last pass."""
    plans_run: int = 0
    """Plans run since the server started."""
    last_error: str | None = None
    """The last pass's error, if it failed."""
    passing: bool = False
    """A pass is under way now."""


class HeartbeatLoop:
    """Runs due plans on a background thread until stopped."""

    def __init__(
        self,
        store: Callable[[], SqlStore],
        interval: float,
        *,
        activity: RequestActivity | None = None,
    ) -> None:
        self._store = store
        self._activity = activity  # each pass starts in a quiet moment of its requests
        # ``heartbeat.worker_owner``'s form, without importing the heartbeat (and the review
        # pipeline) while the server starts: the first pass imports them, on its thread.
        owner = f"{socket.gethostname()}:{os.getpid()}"
        self.state = HeartbeatState(interval=interval, owner=owner)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proctor-heartbeat", daemon=True)

    def start(self) -> None:
        """Start passing over due plans."""
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the current pass; a review it runs is paused first."""
        self._stop.set()
        if self.state.passing:
            self._pause_running_review()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def tick(self) -> None:
        """One pass: run the plans due now (nothing while the app is off)."""
        from proctor.heartbeat import app_enabled

        store = self._store()
        enabled = app_enabled(store)
        self.state.last_app_enabled = enabled
        if enabled:
            # The scheduler (and the review pipeline and model callers it imports) only when
            # there is something to run: with the app off, importing it on the first pass
            # took 115-250 ms of CPU, holding the interpreter while the server answered its
            # first requests (gate hooks among them).
            from proctor.heartbeat import run_due

            for outcome in run_due(store, now=utcnow(), owner=self.state.owner, clock=utcnow):
                self.state.plans_run += 1
                logger.info("heartbeat plan %s: %s", outcome.plan_name, outcome.status)
        self.state.ticks += 1
        self.state.last_tick_at = utcnow()

    def _run(self) -> None:
        # The first pass waits a moment (at most one interval): it imports the heartbeat
        # and the review pipeline and opens the store, which would compete with the
        # server's first requests.
        self._stop.wait(min(self.state.interval, FIRST_PASS_DELAY_SECONDS))
        while not self._stop.is_set():
            if self._activity is not None and not self._activity.wait_quiet(stop=self._stop):
                break
            try:
                self.state.passing = True
                self.tick()
                self.state.last_error = None
            except ProctorError as exc:
                self.state.last_error = str(exc)
                logger.warning("heartbeat pass failed: %s", exc)
            except Exception as exc:  # a bug: keep serving, say so in the log and the state
                self.state.last_error = f"{type(exc).__name__}: {exc}"
                logger.exception("heartbeat pass failed")
            finally:
                self.state.passing = False
            self._stop.wait(self.state.interval)

    def _pause_running_review(self) -> None:
        from proctor.review import pause_review

        store = self._store()
        run_id = store.review_slot_holder()
        if run_id is None:
            return
        try:
            pause_review(store, run_id)
        except ProctorError as exc:
            logger.warning("could not pause review %s: %s", run_id[:8], exc)
