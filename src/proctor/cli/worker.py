"""``proctor worker``: execute background work — on PostgreSQL, jobs from the queue.

With ``PROCTOR_DATABASE_URL`` on PostgreSQL it runs a procrastinate worker
(``proctor.jobs``): review runs, supervision analyses, suggestion phrasing and the
periodic heartbeat, ``--concurrency`` jobs at once; start any number of them, on any
machine. SIGINT/SIGTERM stop it after the jobs in hand; a worker killed outright has
its jobs retried by another once it has been silent for ``PROCTOR_WORKER_STALL_SECONDS``.

On the embedded SQLite store there is no queue: every ``--interval`` it claims the
heartbeat plans that are due (with a lease, so two workers never run one plan twice) and
reviews them one after the other. ``--once`` makes one pass and exits, for cron. Ctrl-C
stops it; a review it was running is paused and the plan's lease expires, so the plan is
claimed again later.
"""

from __future__ import annotations

import contextlib
import time

import click
from rich.text import Text

from proctor._util.clock import utcnow
from proctor.cli._common import console, err_console, writable_store
from proctor.cli._duration import Duration
from proctor.cli.plans import print_outcome
from proctor.heartbeat import app_enabled, run_due, worker_owner
from proctor.jobs import uses_queue


@click.command("worker")
@click.option("--once", is_flag=True, help="Work until nothing is due or queued, then exit (cron).")
@click.option(
    "--interval",
    type=Duration("s"),
    default="30s",
    show_default=True,
    help="SQLite: how often to look for due plans.",
)
@click.option(
    "--concurrency", type=click.IntRange(1, 64), default=1, show_default=True,
    help="PostgreSQL: how many jobs this worker runs at once.",
)  # fmt: skip
def worker_command(once: bool, interval: float, concurrency: int) -> None:
    """Run background work in the foreground until Ctrl-C (jobs on PostgreSQL, plans on SQLite)."""
    with writable_store() as store:  # creates or migrates the schema before any job runs
        queued = uses_queue(store)
        url = store.database_url() if queued else None
    if url is not None:
        _queue_worker(url, concurrency=concurrency, once=once)
    else:
        _sqlite_loop(once=once, interval=interval, concurrency=concurrency)


def _queue_worker(url: str, *, concurrency: int, once: bool) -> None:
    from proctor.jobs import run_worker

    owner = worker_owner()
    console.print(
        Text(f"worker {owner}: running queued jobs on PostgreSQL, {concurrency} at a time")
    )
    with contextlib.suppress(KeyboardInterrupt):
        run_worker(url, concurrency=concurrency, name=owner, once=once)
    err_console.print(Text("worker stopped"))


def _sqlite_loop(*, once: bool, interval: float, concurrency: int) -> None:
    owner = worker_owner()
    if concurrency != 1:
        err_console.print(
            "--concurrency applies to PostgreSQL workers; on the SQLite file one review "
            "executes at a time (REV-6)."
        )
    if not once:
        console.print(
            Text(
                f"worker {owner}: SQLite, no job queue: looking for due heartbeat plans "
                f"every {interval:g}s"
            )
        )
    try:
        while True:
            with writable_store() as store:
                if not app_enabled(store):
                    if once:
                        console.print(
                            "The supervisor app is disabled: no plan runs. "
                            "Turn it on with `proctor app enable`."
                        )
                    outcomes = []
                else:
                    outcomes = run_due(store, now=utcnow(), owner=owner, clock=utcnow)
            for outcome in outcomes:
                print_outcome(outcome)
            if once:
                if not outcomes:
                    console.print("No plan was due.")
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        err_console.print(Text("worker stopped"))
