"""Background work ``proctor serve`` hosts waits for a quiet moment (issue 18, 1(a)).

The heartbeat's passes, the start of webhook delivery and its polls run Python in the
interpreter that answers gate hooks; while they ran, a hook request waited for the lock at
each of its turns. They now wait until no request is in flight and none just ended (at most
``LONGEST_WAIT_SECONDS``), and a heartbeat pass with the app off imports no scheduler.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from proctor.api import create_app
from proctor.api._app import DeferredStart
from proctor.api._heartbeat import HeartbeatLoop
from proctor.api._quiet import RequestActivity
from proctor.store import open_store


def _waiter(
    activity: RequestActivity, *, quiet: float, longest: float
) -> tuple[threading.Thread, list[bool]]:
    said: list[bool] = []
    thread = threading.Thread(
        target=lambda: said.append(activity.wait_quiet(quiet=quiet, longest=longest))
    )
    thread.start()
    return thread, said


def test_background_work_waits_while_a_request_is_in_flight_and_goes_on_after_it() -> None:
    activity = RequestActivity()
    activity.begin()
    thread, said = _waiter(activity, quiet=0.01, longest=60.0)
    thread.join(0.3)  # many quiet spans go by, but a request is still in flight
    assert thread.is_alive()
    activity.end()
    thread.join(30)
    assert said == [True]


def test_a_server_that_is_never_quiet_still_runs_its_background_work() -> None:
    activity = RequestActivity()
    activity.begin()
    thread, said = _waiter(activity, quiet=60.0, longest=0.05)
    thread.join(30)
    assert said == [True]


def test_waiting_background_work_stops_waiting_when_the_app_stops() -> None:
    activity = RequestActivity()
    activity.begin()
    thread, said = _waiter(activity, quiet=60.0, longest=600.0)
    activity.close()
    thread.join(30)
    assert said == [False]
    assert activity.wait_quiet() is False  # and later work does not wait at all


def test_a_deferred_service_starts_in_a_quiet_moment_and_never_once_the_app_stopped() -> None:
    started = threading.Event()

    class Service:
        def start(self) -> None:
            started.set()

        def stop(self) -> None:
            pass

    activity = RequestActivity()
    activity.begin()
    deferred = DeferredStart(Service, delay=0.0, activity=activity)
    deferred.start()
    assert not started.wait(0.3)
    activity.end()
    assert started.wait(30)
    deferred.stop()

    stopping = RequestActivity()
    stopping.begin()
    never = DeferredStart(Service, delay=0.0, activity=stopping)
    started.clear()
    never.start()
    stopping.close()
    never.stop()
    assert not never.started
    assert not started.is_set()


def test_the_heartbeat_pass_waits_for_a_quiet_moment(tmp_path: Path) -> None:
    store = open_store(tmp_path / "proctor.db")
    try:
        activity = RequestActivity()
        activity.begin()
        loop = HeartbeatLoop(lambda: store, 0.01, activity=activity)
        loop.start()
        try:
            thread_done = threading.Event()
            assert not thread_done.wait(0.3)
            assert loop.state.ticks == 0  # due, but a request is in flight
            activity.end()
            for _ in range(600):
                if loop.state.ticks:
                    break
                thread_done.wait(0.05)
            assert loop.state.ticks >= 1
            assert loop.state.last_error is None
        finally:
            loop.stop()
    finally:
        store.close()


def test_the_app_counts_its_requests_for_the_background_work(tmp_path: Path) -> None:
    import asyncio

    app = create_app(lambda: open_store(tmp_path / "proctor.db"), token=None)
    activity: RequestActivity = app.state.request_activity

    async def ask() -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return (await client.get("/api/health")).status_code

    assert asyncio.run(ask()) == 200
    # Answered just now: not quiet yet for a long span, quiet for no span at all.
    assert activity.in_flight == 0
    assert activity.quiet_for(0.0)
    assert not activity.quiet_for(60.0)


@pytest.mark.parametrize("app_on", [False, True])
@pytest.mark.slow
def test_a_heartbeat_pass_imports_the_scheduler_only_when_the_app_is_on(
    tmp_path: Path, app_on: bool
) -> None:
    """With the app off, a pass reads one setting: importing the scheduler (the review
    pipeline, the model callers) took 115-250 ms of CPU from the server's first requests."""
    code = f"""
import json, sys
from proctor.api._heartbeat import HeartbeatLoop
from proctor.heartbeat import set_app_enabled
from proctor.store import open_store
store = open_store({str(tmp_path / "proctor.db")!r})
set_app_enabled(store, {app_on!r})
loop = HeartbeatLoop(lambda: store, 30.0)
loop.tick()
store.close()
print(json.dumps([loop.state.ticks, "proctor.heartbeat._scheduler" in sys.modules]))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    ticks, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert ticks == 1
    assert imported is app_on


@pytest.mark.parametrize(
    ("content_type", "counted"), [(b"text/event-stream", 0), (b"application/json", 1)]
)
def test_an_open_event_stream_is_not_a_request_in_flight(content_type: bytes, counted: int) -> None:
    """The UI keeps its notifications stream open as long as a page is: counted, the
    server would never be quiet and every background pass would wait its longest."""
    import asyncio

    from starlette.types import Message, Receive, Scope, Send

    from proctor.api._quiet import RequestActivityMiddleware

    activity = RequestActivity()
    seen: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", content_type)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        seen.append(activity.in_flight)  # the body still to come
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def ignore(message: Message) -> None:
        return None

    async def nothing() -> Message:
        return {"type": "http.disconnect"}

    middleware = RequestActivityMiddleware(app, activity)
    asyncio.run(middleware({"type": "http", "path": "/x"}, nothing, ignore))
    assert seen == [counted]
    assert activity.in_flight == 0  # ended once, not twice
