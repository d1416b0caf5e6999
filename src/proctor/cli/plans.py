"""``proctor plans``: scheduled reviews — heartbeat plans (SPEC HB-2, HB-3).

A plan reviews one project (or every project) daily or weekly at a local time in an IANA
timezone; ``proctor worker`` runs the plans that are due. Times that do not exist on a
spring-forward day run when the clocks jump; times that happen twice on a fall-back day
run once, at the first.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import click
from rich.text import Text

from proctor._util.clock import utcnow
from proctor.cli._common import console, json_option, print_json, writable_store
from proctor.cli._duration import Duration
from proctor.cli._exit import EXIT_PARTIAL
from proctor.cli._tables import Column, fitted_table
from proctor.errors import ConfigError
from proctor.heartbeat import (
    HeartbeatOutcome,
    HeartbeatPlan,
    describe_schedule,
    draft_from_plan,
    draft_plan,
    local_timezone,
    run_now,
    save_plan,
    save_plan_edit,
    set_plan_enabled,
    worker_owner,
)
from proctor.review import open_semantic_layer


def window_hours(seconds: float | None) -> int | None:
    """A ``--window`` duration as whole hours."""
    if seconds is None:
        return None
    if seconds % 3600:
        raise ConfigError(f"--window must be whole hours (like 24h or 7d), got {seconds:g}s")
    return int(seconds // 3600)


def _schedule(daily: str | None, weekly: str | None) -> dict[str, Any]:
    if (daily is None) == (weekly is None):
        raise ConfigError("give one schedule: --daily HH:MM or --weekly mon,thu@HH:MM")
    if daily is not None:
        return {"recurrence": "daily", "time": daily, "weekdays": ()}
    assert weekly is not None
    days, at, time = weekly.partition("@")
    if not at:
        raise ConfigError(f"--weekly needs days and a time like mon,thu@09:00, got {weekly!r}")
    return {"recurrence": "weekly", "time": time, "weekdays": days}


@click.group("plans")
def plans() -> None:
    """Heartbeat plans: reviews that run on a daily or weekly schedule."""


@plans.command("add")
@click.argument("name")
@click.option("--daily", metavar="HH:MM", help="Run every day at this local time.")
@click.option("--weekly", metavar="DAYS@HH:MM", help="Run on these days, e.g. mon,thu@09:00.")
@click.option("--timezone", help="IANA timezone of the time (default: this machine's zone).")
@click.option("--project", help="Review one project (default: every project).")
@click.option(
    "--intervention", type=click.Choice(["memory_only", "suggest"]), default="suggest",
    show_default=True, help="suggest: turn what changed into suggestions; memory_only: review only.",
)  # fmt: skip
@click.option(
    "--window", type=Duration("h"),
    help="Review only the last N hours (24h, 7d); default: everything new since the last review.",
)  # fmt: skip
@click.option("--disabled", is_flag=True, help="Save the plan switched off.")
def add_command(
    name: str,
    daily: str | None,
    weekly: str | None,
    timezone: str | None,
    project: str | None,
    intervention: str,
    window: float | None,
    disabled: bool,
) -> None:
    """Save a new plan; it first runs at its next scheduled time."""
    draft = draft_plan(
        name=name,
        scope=project,
        timezone=timezone or local_timezone(),
        enabled=not disabled,
        intervention=intervention,
        window_hours=window_hours(window),
        **_schedule(daily, weekly),
    )
    with writable_store() as store:
        plan = save_plan(store, draft, now=utcnow())
    _print_saved("saved", plan)


@plans.command("edit")
@click.argument("plan_ref", metavar="PLAN")
@click.option("--name", help="A new name.")
@click.option("--daily", metavar="HH:MM", help="Run every day at this local time.")
@click.option("--weekly", metavar="DAYS@HH:MM", help="Run on these days, e.g. mon,thu@09:00.")
@click.option("--timezone", help="IANA timezone of the time (kept when not given).")
@click.option("--project", help="Review this project.")
@click.option("--all-projects", is_flag=True, help="Review every project.")
@click.option("--intervention", type=click.Choice(["memory_only", "suggest"]))
@click.option("--window", type=Duration("h"), help="Review only the last N hours (24h, 7d).")
@click.option("--no-window", is_flag=True, help="Review everything new since the last review.")
def edit_command(
    plan_ref: str,
    name: str | None,
    daily: str | None,
    weekly: str | None,
    timezone: str | None,
    project: str | None,
    all_projects: bool,
    intervention: str | None,
    window: float | None,
    no_window: bool,
) -> None:
    """Change a plan; what is not given (enabled, timezone, …) is kept."""
    if project is not None and all_projects:
        raise ConfigError("give --project or --all-projects, not both")
    if window is not None and no_window:
        raise ConfigError("give --window or --no-window, not both")
    changes: dict[str, Any] = {}
    if daily is not None or weekly is not None:
        changes.update(_schedule(daily, weekly))
    if name is not None:
        changes["name"] = name
    if timezone is not None:
        changes["timezone"] = timezone
    if project is not None or all_projects:
        changes["scope"] = project
    if intervention is not None:
        changes["intervention"] = intervention
    if window is not None or no_window:
        changes["window_hours"] = window_hours(window)
    with writable_store() as store:
        plan = store.plan(plan_ref)
        draft = draft_from_plan(plan, **changes)
        saved = save_plan_edit(store, plan.plan_id, draft, now=utcnow())
    _print_saved("updated", saved)


@plans.command("enable")
@click.argument("plan_ref", metavar="PLAN")
def enable_command(plan_ref: str) -> None:
    """Switch a plan on; it runs from its next scheduled time (missed times are not run)."""
    with writable_store() as store:
        plan = set_plan_enabled(store, plan_ref, True, now=utcnow())
    _print_saved("enabled", plan)


@plans.command("disable")
@click.argument("plan_ref", metavar="PLAN")
def disable_command(plan_ref: str) -> None:
    """Switch a plan off; its settings and history are kept."""
    with writable_store() as store:
        plan = set_plan_enabled(store, plan_ref, False, now=utcnow())
    _print_saved("disabled", plan)


@plans.command("remove")
@click.argument("plan_ref", metavar="PLAN")
def remove_command(plan_ref: str) -> None:
    """Delete a plan and its heartbeat history (published results stay)."""
    with writable_store() as store:
        plan = store.delete_plan(plan_ref)
    console.print(Text(f"removed plan {plan.name}"))


@plans.command("list")
@json_option()
def list_command(as_json: bool) -> None:
    """Every plan with its schedule and next run, in the plan's zone and in UTC."""
    with writable_store() as store:
        saved = store.plans()
    if as_json:
        print_json([_plan_json(plan) for plan in saved])
        return
    if not saved:
        console.print("No plans yet. Add one: proctor plans add NAME --daily 09:00")
        return
    columns = (
        Column("plan", "id"),
        Column("scope", "text", least=8),
        Column("schedule", "text", least=10),
        Column("next run (local)", "text", drop=2, least=16),
        Column("next run (UTC)", "text", least=16),
        Column("state"),
        Column("intervention", drop=1),
        Column("window", "text", drop=3, least=8),
    )
    rows: list[list[str | Text]] = []
    for plan in saved:
        local, utc = _next_run_texts(plan)
        rows.append(
            [
                plan.name,
                plan.scope,
                describe_schedule(plan),
                local,
                utc,
                _state(plan),
                plan.intervention,
                "since last review" if plan.window_hours is None else f"last {plan.window_hours}h",
            ]
        )
    table = fitted_table(columns, rows, width=console.width, title="Heartbeat plans")
    console.print(table)


@plans.command("run-now")
@click.argument("plan_ref", metavar="PLAN")
@click.option("--model", "connection", help="Model connection for the review's semantic layer.")
@click.option("--no-model", is_flag=True, help="Structural layer only, even with a connection.")
@json_option()
def run_now_command(plan_ref: str, connection: str | None, no_model: bool, as_json: bool) -> None:
    """Run a plan now, out of schedule; its next scheduled run is unchanged."""
    with writable_store() as store:
        outcome = run_now(
            store,
            plan_ref,
            now=utcnow(),
            owner=worker_owner(),
            semantic_factory=lambda: open_semantic_layer(store, connection, use_model=not no_model),
            clock=utcnow,
        )
    if as_json:
        print_json(asdict(outcome))
    else:
        print_outcome(outcome)
    if outcome.status not in ("completed", "no_change"):
        raise SystemExit(EXIT_PARTIAL)


def print_outcome(outcome: HeartbeatOutcome) -> None:
    """One heartbeat run as a line or two."""
    words = {
        "completed": ("updated", "green"),
        "no_change": ("no change (no model call)", "green"),
        "suggestions_failed": ("updated, suggestions failed", "yellow"),
    }.get(outcome.status, (outcome.status, "red"))
    line = Text.assemble(
        (f"plan {outcome.plan_name}", "bold"),
        " · ",
        (words[0], words[1]),
        f" · attempt {outcome.attempt} · model calls {outcome.model_calls}",
    )
    if outcome.suggestions:
        line.append(f" · suggestions {outcome.suggestions}")
    if outcome.result_id:
        line.append(f" · result {outcome.result_id[:8]}")
    console.print(line)
    if outcome.error:
        console.print(Text(f"error: {outcome.error}", style="red"))


def _print_saved(verb: str, plan: HeartbeatPlan) -> None:
    local, utc = _next_run_texts(plan)
    console.print(
        Text.assemble(
            (f"{verb} plan {plan.name}", "bold"),
            f" · {plan.scope} · {describe_schedule(plan)} {plan.timezone} · {_state(plan)}",
        )
    )
    if plan.enabled:
        console.print(Text(f"next run: {local} ({utc})"))


def _state(plan: HeartbeatPlan) -> str:
    if plan.lease_owner is not None:
        return "running"
    return "enabled" if plan.enabled else "disabled"


def _next_run_texts(plan: HeartbeatPlan) -> tuple[str, str]:
    if not plan.enabled or plan.next_run_at is None:
        return "—", "—"
    return _local(plan.next_run_at, plan.timezone), plan.next_run_at.strftime("%Y-%m-%d %H:%M UTC")


def _local(moment: datetime, zone: str) -> str:
    local = moment.astimezone(ZoneInfo(zone))
    return f"{local:%a %Y-%m-%d %H:%M} {local.tzname()}"


def _plan_json(plan: HeartbeatPlan) -> dict[str, Any]:
    data = asdict(plan)
    data["scope"] = plan.scope
    data["schedule"] = describe_schedule(plan)
    data["next_run_local"] = (
        None if plan.next_run_at is None else _local(plan.next_run_at, plan.timezone)
    )
    return data
