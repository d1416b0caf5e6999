"""``proctor supervisor model``: which connection the model supervisor uses (SPEC MOD-2)."""

from __future__ import annotations

from dataclasses import asdict

import click

from proctor.cli._common import console, err_console, json_option, print_json, writable_store
from proctor.errors import ConfigError, NotFoundError
from proctor.models import key_is_set, pin_supervisor, supervisor_choice


@click.group()
def supervisor() -> None:
    """Settings of the model supervisor."""


@supervisor.command("model")
@click.argument("name", required=False)
@click.option(
    "--follow-default", is_flag=True, help="Use whichever connection is the default (unpin)."
)
@json_option()
def model_command(name: str | None, follow_default: bool, as_json: bool) -> None:
    """Show the supervisor's connection, pin it to NAME, or make it follow the default.

    A pinned connection is used as long as it can serve; when it is removed, is not a text
    model or lacks its key, supervision fails and says so; it never falls back to another.
    """
    if name is not None and follow_default:
        raise click.UsageError("give a connection NAME or --follow-default, not both")
    with writable_store() as store:
        if follow_default:
            pin_supervisor(store, None)
        elif name is not None:
            connection = store.connection(name)
            if connection is None:
                raise NotFoundError(
                    f"there is no model connection named {name!r}; see `proctor models list`"
                )
            if connection.kind != "text":
                raise ConfigError(
                    f"{name!r} is an {connection.kind} model; the supervisor needs a text model"
                )
            pin_supervisor(store, name)
            if not key_is_set(connection):
                err_console.print(
                    f"Warning: {connection.api_key_env} is not set here; supervision fails "
                    "until it is.",
                    style="yellow",
                    markup=False,
                )
        choice = supervisor_choice(store)
    if as_json:
        print_json(asdict(choice))
        return
    setting = f"is pinned to {choice.pinned!r}" if choice.pinned else "follows the default"
    if choice.problem is None:
        console.print(f"The supervisor {setting}: it uses {choice.connection!r}.", markup=False)
    else:
        console.print(f"The supervisor cannot run: {choice.problem}", markup=False)
