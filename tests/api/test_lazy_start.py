"""``proctor serve`` starts without importing what no request has needed yet.

Each check runs a fresh interpreter and lists which of Proctor's heavy packages an import
left in ``sys.modules``: the review pipeline, the job queue, the heartbeat (plans and
suggestions), webhook delivery (and httpx) are imported by the route or the background
pass that first uses them, not while the server starts (issue 18: start < 1 s).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from proctor.api._heartbeat import HeartbeatLoop
from proctor.heartbeat import worker_owner
from proctor.store import SqlStore

DEFERRED = ("proctor.review", "proctor.jobs", "proctor.heartbeat", "proctor.notify", "httpx")
"""Packages a server imports on first use only."""


def _imported_after(code: str, watched: tuple[str, ...] = DEFERRED) -> list[str]:
    """The ``watched`` modules present in a new interpreter after running ``code``."""
    listing = (
        f"import json, sys; print(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", f"{code}\n{listing}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return found


def test_importing_the_api_package_loads_no_review_jobs_heartbeat_or_webhook_code() -> None:
    assert _imported_after("import proctor.api") == []


def test_the_serve_command_module_loads_no_review_jobs_heartbeat_or_webhook_code() -> None:
    assert _imported_after("import proctor.cli.main, proctor.cli.serve") == []


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        ("create_app(open_store, token=None)", []),
        ("create_app(open_store, token=None, deliver_webhooks=True)", ["proctor.notify", "httpx"]),
    ],
    ids=["without-webhooks", "with-webhooks"],
)
def test_building_the_app_imports_webhook_delivery_only_when_it_delivers_webhooks(
    make: str, expected: list[str]
) -> None:
    code = f"from proctor.api import create_app\nfrom proctor.store import open_store\n{make}"
    assert _imported_after(code, ("proctor.notify", "httpx")) == expected


def _no_store() -> SqlStore:
    raise AssertionError("a loop that is not started opens no store")


def test_the_heartbeat_loop_leases_plans_as_this_process_like_proctor_worker() -> None:
    assert HeartbeatLoop(_no_store, 30.0).state.owner == worker_owner()
