"""``proctor serve`` hosts the heartbeat loop: due plans run while the server is up (HB-3)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import click
import httpx
import pytest

from proctor._util.clock import utcnow
from proctor.api._quiet import QUIET_SECONDS
from proctor.cli.serve import serve_command
from proctor.heartbeat import draft_plan, save_plan, set_app_enabled
from proctor.store import open_store
from tests.backends import database_env
from tests.loopback import free_port
from tests.server_zygote import forked_serving


def _due_plan(database: Path, *, app_on: bool) -> None:
    """A daily plan whose next run passed yesterday; the app switch as asked."""
    store = open_store(database)
    try:
        set_app_enabled(store, app_on)
        plan = draft_plan(
            name="nightly", recurrence="daily", time="03:00", timezone="UTC",
            intervention="memory_only",
        )  # fmt: skip
        save_plan(store, plan, now=utcnow() - timedelta(days=2))
    finally:
        store.close()


@contextmanager
def _serve(database: Path, *extra: str) -> Iterator[httpx.Client]:
    port = free_port()
    command = ["serve", "--port", str(port), *extra]
    env = {
        "PROCTOR_HOME": str(database.parent),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": "",
        **database_env(database.parent),
    }
    with (
        forked_serving(command, env, port),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client,
    ):
        yield client


INTERVAL = "0.25s"
"""The loop's interval in these servers: a fraction of a second, so the tests wait for a
few passes in about a second rather than a second each (``--heartbeat-interval`` took
whole seconds only: these tests spent 6 of their 10 seconds waiting)."""


def test_the_heartbeat_interval_takes_a_fraction_of_a_second_but_not_zero() -> None:
    option = next(p for p in serve_command.params if p.name == "heartbeat_interval")
    assert option.type.convert("0.25s", option, None) == 0.25
    assert option.type.convert("30s", option, None) == 30.0
    for refused in ("0s", "0", "-1s"):
        with pytest.raises(click.BadParameter):
            option.type.convert(refused, option, None)


def _until(check: Callable[[], Any], seconds: float = 60.0) -> Any:
    """Poll ``check`` until it returns something truthy (the server works on its own clock)."""
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        value = check()
        if value:
            return value
        # Slower than the server's quiet span: its passes wait for a moment without
        # requests (``_quiet``), which a client asking every 0.1 s would never leave.
        time.sleep(2 * QUIET_SECONDS)
    raise AssertionError(f"not within {seconds:g}s: {check.__doc__ or check}")


@pytest.fixture
def hosting(database: Path) -> Iterator[httpx.Client]:
    _due_plan(database, app_on=True)
    with _serve(database, "--heartbeat-interval", INTERVAL) as client:
        yield client


@pytest.mark.slow
def test_a_due_plan_runs_while_the_server_is_up(hosting: httpx.Client) -> None:
    def plan_ran() -> list[dict[str, Any]]:
        """the plan's finished run appears in the activity list"""
        entries = hosting.get("/api/activity").json()["activity"]
        return [
            e
            for e in entries
            if e["kind"] == "heartbeat" and e["plan_name"] == "nightly" and e["finished_at"]
        ]

    runs = _until(plan_ran)
    assert runs[0]["review_run_id"]
    assert runs[0]["status"] in ("completed", "no_change"), runs[0]
    # The run is stored finished a moment before the loop counts it: wait for the count.
    status = _until(
        lambda: (s := hosting.get("/api/heartbeat").json())["plans_run"] >= 1 and s, seconds=10
    )
    assert status["hosted"] is True
    assert status["app_enabled"] is True
    assert status["last_error"] is None
    # The plan's next run moved past now: a later pass does not run it again.
    ticks = status["ticks"]
    _until(lambda: hosting.get("/api/heartbeat").json()["ticks"] >= ticks + 2)
    assert len(plan_ran()) == 1


@pytest.mark.slow
def test_with_the_app_off_the_loop_passes_but_runs_nothing(database: Path) -> None:
    _due_plan(database, app_on=False)
    with _serve(database, "--heartbeat-interval", INTERVAL) as client:
        _until(lambda: client.get("/api/heartbeat").json()["ticks"] >= 2)
        status = client.get("/api/heartbeat").json()
        assert status["app_enabled"] is False
        assert status["plans_run"] == 0
        entries = client.get("/api/activity").json()["activity"]
        assert not [e for e in entries if e["kind"] == "heartbeat"]


@pytest.mark.slow
def test_no_heartbeat_leaves_due_plans_to_a_worker(database: Path) -> None:
    _due_plan(database, app_on=True)
    with _serve(database, "--no-heartbeat") as client:
        status = client.get("/api/heartbeat").json()
        assert status["hosted"] is False
        assert status["ticks"] == 0
        entries = client.get("/api/activity").json()["activity"]
        assert not [e for e in entries if e["kind"] == "heartbeat"]
