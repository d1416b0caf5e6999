"""``proctor supervise``: live model supervision of a conversation or task (SPEC SUP-1, SUP-2, SUP-9).

Supervision is off by default. ``enable`` binds a target to a mode, triggers, a throttle
and a budget; new events brought in by ``proctor ingest`` and ``proctor watch`` then fire
analyses. ``run`` analyses now. Exit status of ``run``: 0 the analysis ran (findings or
none); 1 supervision unavailable, the budget spent or another analysis of the target
running; 2 a setting to fix (e.g. a broken pinned connection) or an unknown target.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from functools import partial
from typing import Any

import anyio
import click
from rich.text import Text

from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.cli._duration import Duration
from proctor.cli._exit import EXIT_PARTIAL
from proctor.cli._findings_view import finding_block, finding_json
from proctor.errors import ConfigError, ModelError
from proctor.store import ModelSettingsReader, SqlStore, SupervisionSession
from proctor.supervision import (
    MODES,
    TRIGGERS,
    ModelExecutor,
    ScheduleOutcome,
    Scheduler,
    SessionSettings,
    SessionStatus,
    SystemClock,
    Trigger,
    disable_supervision,
    enable_supervision,
    resolve_target,
    session_status,
)
from proctor.supervisor import Mode


class Limit(click.ParamType[int | None, Any]):
    """A positive whole number, or ``none`` for no limit."""

    name = "N|none"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | None:
        if value is None or str(value).lower() == "none":
            return None
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a whole number nor 'none'", param, ctx)
        if number < 1:
            self.fail("use a number of at least 1, or 'none' for no limit", param, ctx)
        return number


@click.group("supervise")
def supervise() -> None:
    """Live model supervision of a conversation or task (off until enabled).

    TARGET is a conversation id, session id or unique prefix, or task:<id> for a task.
    """


@supervise.command("enable")
@click.argument("target")
@click.option("--mode", type=click.Choice(MODES), default="general", show_default=True)
@click.option(
    "--trigger",
    "triggers",
    multiple=True,
    type=click.Choice(TRIGGERS),
    help="When to analyse (repeatable; default after_reply). manual: only `supervise run`.",
)
@click.option(
    "--every", type=click.IntRange(min=1), help="Events between analyses (every_n_steps)."
)
@click.option(
    "--throttle",
    type=Duration(fractions=True, zero=True),
    default="30s",
    show_default=True,
    help="Least time between two automatic analyses of the target.",
)
@click.option(
    "--budget-calls", type=Limit(), default="60", show_default=True, help="Model calls per period."
)
@click.option(
    "--budget-tokens", type=Limit(), default="none", show_default=True, help="Tokens per period."
)
@click.option(
    "--period",
    type=Duration(fractions=True, zero=True),
    default="1h",
    show_default=True,
    help="Budget period.",
)
def enable_command(
    target: str,
    mode: Mode,
    triggers: tuple[Trigger, ...],
    every: int | None,
    throttle: float,
    budget_calls: int | None,
    budget_tokens: int | None,
    period: float,
) -> None:
    """Supervise TARGET from now on; events already stored start no analysis."""
    settings = SessionSettings(
        mode=mode,
        triggers=triggers or (("every_n_steps",) if every is not None else ("after_reply",)),
        every_n_steps=every,
        throttle_seconds=throttle,
        budget_calls=budget_calls,
        budget_tokens=budget_tokens,
        budget_period_seconds=period,
    )
    with writable_store() as store:
        resolved = resolve_target(store, target)
        session = enable_supervision(store, resolved, settings, now=SystemClock().now())
        connection, problem = _connection(store)
    console.print(
        f"Supervising {resolved.label}: mode {session.mode}, triggers "
        f"{', '.join(session.triggers)}, throttle {_seconds(session.throttle_seconds)}, "
        f"budget {_budget(session.budget_calls, session.budget_tokens)} per "
        f"{_seconds(session.budget_period_seconds)}.",
        markup=False,
    )
    if problem is not None:
        console.print(
            Text.assemble(("Note: ", "yellow"), f"analyses will fail until fixed: {problem}")
        )
    elif connection is not None:
        console.print(f"Model: {connection}", markup=False)


@supervise.command("disable")
@click.argument("target")
def disable_command(target: str) -> None:
    """Stop supervising TARGET (its runs and findings are kept)."""
    with writable_store() as store:
        resolved = resolve_target(store, target)
        disable_supervision(store, resolved, now=SystemClock().now())
    console.print(f"Supervision of {resolved.label} disabled.", markup=False)


@supervise.command("status")
@click.argument("target", required=False)
@json_option()
def status_command(target: str | None, as_json: bool) -> None:
    """State, last run, pending analysis and budget use of each session (or of TARGET)."""
    now = SystemClock().now()
    with readable_store() as store:
        if target is not None:
            resolved = resolve_target(store, target)
            found = store.supervision_session(resolved.target_id)
            sessions = [found] if found is not None else []
        else:
            sessions = store.supervision_sessions()
        statuses = [session_status(store, s, now=now) for s in sessions]
        connection, problem = _connection(store)
    if as_json:
        print_json(
            {
                "connection": connection,
                "connection_error": problem,
                "sessions": [_status_json(s) for s in statuses],
            }
        )
        return
    if not statuses:
        what = f"{target} is not supervised" if target else "No target is supervised"
        console.print(
            f"{what} (supervision is off by default); `proctor supervise enable TARGET` starts it.",
            markup=False,
        )
    for status in statuses:
        console.print(_status_block(status, now))
    if problem is not None:
        console.print(Text.assemble(("Model: ", "bold"), ("error — ", "red"), problem))
    else:
        console.print(Text.assemble(("Model: ", "bold"), str(connection)))


@supervise.command("run")
@click.argument("target")
@click.option(
    "--mode", type=click.Choice(MODES), help="Mode for this run (default: the session's)."
)
@json_option()
@click.pass_context
def run_command(ctx: click.Context, target: str, mode: Mode | None, as_json: bool) -> None:
    """Analyse TARGET now: skips the throttle, never the budget.

    Works on a target without a session too (mode general unless --mode).
    """
    clock = SystemClock()
    with writable_store() as store:
        resolved = resolve_target(store, target)
        scheduler = Scheduler(store, clock=clock, executor=ModelExecutor(store, clock=clock))
        request = partial(scheduler.request, resolved, "manual", mode=mode, manual=True)
        outcome = anyio.run(request)
        refusal = _refusal(store, outcome, target) if outcome.refused is not None else None
    if as_json:
        print_json(_outcome_json(outcome, refusal))
    ctx.exit(_report(outcome, refusal, quiet=as_json))


_WAITING = {
    "throttled": "pending (throttled)",
    "running": "pending (an analysis is running)",
    "budget": "supervision paused: budget",
}


def outcome_line(outcome: ScheduleOutcome) -> str:
    """One line about an automatic analysis, for ``proctor ingest`` and ``proctor watch``."""
    label = f"supervision of {outcome.target.label}"
    if outcome.error is not None:
        return f"{label}: cannot read the target — {outcome.error}"
    result = outcome.result
    if result is None:
        return f"{label}: {_WAITING.get(str(outcome.refused), str(outcome.refused))}"
    run = result.run
    if run.status == "ok":
        return f"{label} ({outcome.trigger}): {run.findings} finding(s)"
    if run.status == "unavailable":
        return f"{label} ({outcome.trigger}): supervision unavailable: {run.error}"
    return f"{label} ({outcome.trigger}): failed — {run.error}"


def _report(outcome: ScheduleOutcome, refusal: str | None, *, quiet: bool) -> int:
    result = outcome.result
    if result is None:
        if not quiet:
            console.print(str(refusal), markup=False)
        return EXIT_PARTIAL
    run = result.run
    if run.status == "failed" and result.config_error:
        raise ConfigError(run.error or "supervision failed")
    if quiet:
        return 0 if run.status == "ok" else EXIT_PARTIAL
    if run.status == "unavailable":
        console.print(f"supervision unavailable: {run.error}", markup=False)
        return EXIT_PARTIAL
    if run.status == "failed":
        console.print(f"supervision failed: {run.error}", markup=False)
        return EXIT_PARTIAL
    for finding in result.findings:
        console.print(finding_block(finding, new=finding.key in result.new_findings))
    console.print(
        f"{outcome.target.label}: {len(result.findings)} finding(s) · mode {run.mode} "
        f"(prompt v{run.prompt_version}) · {run.connection} {run.model} · "
        f"{run.input_tokens:,} in / {run.output_tokens:,} out tokens · "
        f"window {run.window_chars:,} chars",
        markup=False,
    )
    return 0


def _refusal(store: SqlStore, outcome: ScheduleOutcome, typed: str) -> str:
    """Why no analysis started, with when that changes and what the user can do about it."""
    label = outcome.target.label
    if outcome.refused == "running":
        return f"an analysis of {label} is already running; try again when it ends"
    session = outcome.session
    if outcome.refused == "budget" and session is not None:
        status = session_status(store, session, now=SystemClock().now())
        return (
            f"no analysis of {label}: its supervision budget is spent — {_usage(status)} "
            f"used this period; it resets at {_time(status.period_ends_at)}. To raise it: "
            f"proctor supervise enable {typed} {_raised_budget(session, status)}".rstrip()
            + ("" if session.enabled else " (this also turns automatic supervision on again)")
        )
    return f"no analysis of {label} started ({outcome.refused})"


def _raised_budget(session: SupervisionSession, status: SessionStatus) -> str:
    """``supervise enable`` options that keep the session's settings and double a spent limit
    (or what was used, when that is more).

    ``enable`` sets every setting, so each one that differs from its default is repeated.
    """
    usage, default = status.usage, SessionSettings()
    calls, tokens = session.budget_calls, session.budget_tokens
    if calls is not None and usage.calls >= calls:
        calls = max(calls, usage.calls) * 2
    if tokens is not None and usage.tokens >= tokens:
        tokens = max(tokens, usage.tokens) * 2
    options: list[str] = []
    if session.mode != default.mode:
        options.append(f"--mode {session.mode}")
    implied = ("every_n_steps",) if session.every_n_steps is not None else default.triggers
    if tuple(session.triggers) != implied:
        options += [f"--trigger {trigger}" for trigger in session.triggers]
    if session.every_n_steps is not None:
        options.append(f"--every {session.every_n_steps}")
    if session.throttle_seconds != default.throttle_seconds:
        options.append(f"--throttle {session.throttle_seconds:g}s")
    if calls != default.budget_calls:
        options.append(f"--budget-calls {'none' if calls is None else calls}")
    if tokens != default.budget_tokens:
        options.append(f"--budget-tokens {'none' if tokens is None else tokens}")
    if session.budget_period_seconds != default.budget_period_seconds:
        options.append(f"--period {session.budget_period_seconds:g}s")
    return " ".join(options)


def _connection(store: ModelSettingsReader) -> tuple[str | None, str | None]:
    """The connection the supervisor would use now, or the setting to fix."""
    from proctor.models import resolve_supervisor_connection

    try:
        connection = resolve_supervisor_connection(store)
    except ModelError as exc:
        return None, str(exc)
    return f"{connection.name} ({connection.provider}, {connection.model})", None


def _status_block(status: SessionStatus, now: datetime) -> Text:
    session = status.session
    style = {"active": "green", "paused: budget": "yellow", "disabled": "dim"}[status.state]
    text = Text()
    text.append(status.label, style="bold")
    text.append(
        f"  {session.target_type} · mode {session.mode} · triggers {', '.join(session.triggers)}"
        + (f" (every {session.every_n_steps})" if session.every_n_steps else "")
        + " · ",
        style="dim",
    )
    text.append(status.state, style=style)
    run = status.last_run
    text.append("\n  last run  ")
    if run is None:
        text.append("none yet", style="dim")
    else:
        text.append(f"{_time(run.started_at)} {run.trigger}: ")
        text.append(run.status, style="green" if run.status == "ok" else "red")
        if run.status == "ok":
            text.append(f" · {run.findings} finding(s)")
        elif run.error:
            text.append(f" — {run.error}")
        if run.connection:
            text.append(f" · {run.connection}", style="dim")
    text.append("\n  pending   ")
    if status.due_at is None:
        text.append("no", style="dim")
    else:
        wait = max((status.due_at - now).total_seconds(), 0)
        text.append(f"yes, may start {'now' if wait == 0 else 'in ' + _seconds(wait)}")
    text.append(
        f"\n  budget    {_usage(status)} this period (until {_time(status.period_ends_at)})"
        f" · throttle {_seconds(session.throttle_seconds)}"
    )
    return text


def _usage(status: SessionStatus) -> str:
    session, usage = status.session, status.usage
    calls = f"{usage.calls} of {session.budget_calls}" if session.budget_calls else f"{usage.calls}"
    tokens = (
        f"{usage.tokens:,} of {session.budget_tokens:,}"
        if session.budget_tokens
        else f"{usage.tokens:,}"
    )
    return f"{calls} calls, {tokens} tokens"


def _budget(calls: int | None, tokens: int | None) -> str:
    parts = [f"{calls} calls" if calls else "unlimited calls"]
    parts.append(f"{tokens:,} tokens" if tokens else "unlimited tokens")
    return " and ".join(parts)


def _seconds(value: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if value >= size and value % size == 0:
            return f"{int(value // size)} {unit}"
    return f"{value:g} s"


def _time(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _status_json(status: SessionStatus) -> dict[str, Any]:
    return {
        "target": status.label,
        "state": status.state,
        "session": asdict(status.session),
        "usage": asdict(status.usage),
        "period_ends_at": status.period_ends_at,
        "pending_due_at": status.due_at,
        "last_run": asdict(status.last_run) if status.last_run is not None else None,
    }


def _outcome_json(outcome: ScheduleOutcome, refusal: str | None) -> dict[str, Any]:
    result = outcome.result
    return {
        "target": outcome.target.label,
        "refused": outcome.refused,
        "message": refusal,
        "run": asdict(result.run) if result is not None else None,
        "findings": [finding_json(f) for f in result.findings] if result is not None else [],
    }
