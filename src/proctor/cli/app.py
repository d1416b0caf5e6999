"""``proctor app``: turn the supervisor app on or off (SPEC HB-1).

The app is off until enabled. While it is off nothing automatic runs (no heartbeat plan is
claimed) and manual reviews are refused; runs already executing finish, and nothing saved
is lost.
"""

from __future__ import annotations

import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, writable_store
from proctor.heartbeat import app_enabled, set_app_enabled


@click.group("app")
def app() -> None:
    """Turn the supervisor app (reviews and heartbeat plans) on or off."""


@app.command("enable")
def enable_command() -> None:
    """Turn the app on: plans run when due and reviews may be started."""
    with writable_store() as store:
        set_app_enabled(store, True)
    console.print(Text("The supervisor app is enabled: due plans run under `proctor worker`."))


@app.command("disable")
def disable_command() -> None:
    """Turn the app off: nothing automatic runs; saved plans, runs and results are kept."""
    with writable_store() as store:
        set_app_enabled(store, False)
    console.print(
        Text(
            "The supervisor app is disabled: no plan runs and reviews are refused; "
            "a run already executing finishes. Nothing saved was changed."
        )
    )


@app.command("status")
@json_option()
def status_command(as_json: bool) -> None:
    """Say whether the app is on, and how many plans are enabled."""
    with writable_store() as store:
        enabled = app_enabled(store)
        plans = store.plans()
    active = sum(1 for plan in plans if plan.enabled)
    if as_json:
        print_json({"enabled": enabled, "plans": len(plans), "enabled_plans": active})
        return
    state = Text("enabled", style="green") if enabled else Text("disabled", style="yellow")
    console.print(Text.assemble("supervisor app: ", state))
    console.print(f"plans: {len(plans)} ({active} enabled)")
    if not enabled:
        console.print("Turn it on with `proctor app enable`.")
