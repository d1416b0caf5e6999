"""``proctor worker``: run heartbeat plans when they are due (SPEC HB-3).

A foreground loop: every ``--interval`` it claims the plans that are due (with a lease, so
two workers never run one plan twice) and reviews them one after the other. ``--once``
makes one pass and exits, for cron. Ctrl-C stops it; a review it was running is paused
and the plan's lease expires, so the plan is claimed again later.
"""

from __future__ import annotations

import time

import click
from rich.text import Text

from proctor._util.clock import utcnow
from proctor.cli._common import console, err_console, writable_store
from proctor.cli.plans import Duration, print_outcome
from proctor.heartbeat import app_enabled, run_due, worker_owner


@click.command("worker")
@click.option("--once", is_flag=True, help="Make one pass over the due plans and exit (cron).")
@click.option(
    "--interval", type=Duration("s"), default="30s", show_default=True,
    help="How often to look for due plans.",
)  # fmt: skip
def worker_command(once: bool, interval: float) -> None:
    """Run due heartbeat plans in the foreground until Ctrl-C."""
    owner = worker_owner()
    if not once:
        console.print(Text(f"worker {owner}: looking for due plans every {interval:g}s"))
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
