"""``proctor models``: saved model connections, the default one and the pool limits (MOD-1…4)."""

from __future__ import annotations

import re
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, get_args

import anyio
import click
from pydantic import ValidationError
from rich.text import Text

from proctor.cli._common import (
    console,
    err_console,
    json_option,
    print_json,
    readable_store,
    writable_store,
)
from proctor.cli._tables import Column, fitted_table
from proctor.errors import ConfigError, ModelError, NotFoundError
from proctor.models import (
    ChatMessage,
    ModelConnection,
    ModelRequest,
    PoolLimits,
    Provider,
    default_connection_name,
    endpoint,
    key_is_set,
    open_caller,
    pool_limits,
    resolve_connection,
    set_default_connection,
    set_pool_limits,
    store_recorder,
    supervisor_choice,
    supervisor_pin,
)
from proctor.store import SqlStore

PROVIDERS = list(get_args(Provider))
_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_PREFIXES = ("sk-", "sk_", "sk-ant-", "xai-", "gsk_", "AIza", "ghp_")
_TEST_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


@click.group()
def models() -> None:
    """Saved model connections: add, list, test, remove, choose the default, set the pool limits."""


def _key_variable(provider: str, base_url: str | None, given: str | None) -> str | None:
    if given is None:
        if provider == "anthropic":
            return "ANTHROPIC_API_KEY"
        return "OPENAI_API_KEY" if provider == "openai" and base_url is None else None
    if given.startswith(_SECRET_PREFIXES) or (len(given) >= 32 and not given.isupper()):
        raise ConfigError(
            "--api-key-env takes the NAME of the environment variable holding the key "
            "(e.g. OPENAI_API_KEY), not the key itself; keys are never stored"
        )
    if not _VARIABLE_NAME.match(given):
        raise ConfigError(f"--api-key-env {given!r} is not an environment variable name")
    return given


def _new_connection(
    name: str,
    provider: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    path: Path | None,
    kind: str,
) -> ModelConnection:
    if provider == "local":
        if path is None or not path.is_file():
            raise ConfigError("a local connection needs --path FILE, an existing GGUF file")
        if base_url or api_key_env:
            raise ConfigError("a local connection takes --path, not --base-url or --api-key-env")
        model = model or path.stem
    else:
        if path is not None:
            raise ConfigError(f"--path is for local GGUF models, not {provider} connections")
        if not model:
            raise ConfigError(f"a {provider} connection needs --model (the model id to call)")
        if base_url is not None and not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"--base-url {base_url!r} must start with http:// or https://")
    fields = {
        "name": name,
        "provider": provider,
        "model": model,
        "base_url": base_url.rstrip("/") if base_url else None,
        "api_key_env": _key_variable(provider, base_url, api_key_env),
        "path": str(path.resolve()) if path is not None else None,
        "kind": kind,
    }
    try:
        return ModelConnection.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid connection: {problems}") from exc


def _key_note(connection: ModelConnection) -> str:
    if connection.api_key_env is None:
        return "no key"
    state = "set" if key_is_set(connection) else "NOT SET"
    return f"${connection.api_key_env} ({state})"


@models.command("add")
@click.argument("name")
@click.option("--provider", type=click.Choice(PROVIDERS), default="openai", show_default=True)
@click.option("--model", help="Model id at the provider (local: a label, default the file name).")
@click.option("--base-url", help="Endpoint of an OpenAI-compatible or Anthropic server.")
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="Environment variable holding the key (default OPENAI_API_KEY for api.openai.com, "
    "ANTHROPIC_API_KEY for Anthropic). The key itself is never stored.",
)
@click.option("--path", type=click.Path(path_type=Path), help="GGUF file (local provider).")
@click.option("--kind", type=click.Choice(["text", "embedding"]), default="text", show_default=True)
@click.option("--default", "make_default", is_flag=True, help="Make it the default connection.")
@click.option("--replace", is_flag=True, help="Replace a connection of the same name.")
def add_command(
    name: str,
    provider: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    path: Path | None,
    kind: str,
    make_default: bool,
    replace: bool,
) -> None:
    """Save a model connection (NAME: how you will refer to it)."""
    connection = _new_connection(name, provider, model, base_url, api_key_env, path, kind)
    with writable_store() as store:
        if store.connection(name) is not None and not replace:
            raise ConfigError(f"a connection named {name!r} exists; add --replace to replace it")
        store.save_connection(connection)
        if make_default:
            _make_default(store, connection)
        has_default = default_connection_name(store) is not None
    console.print(
        f"Saved connection {name!r}: {provider} {connection.model} at {endpoint(connection)}, "
        f"key: {_key_note(connection)}.",
        markup=False,
    )
    if connection.api_key_env and not key_is_set(connection):
        err_console.print(
            f"Warning: {connection.api_key_env} is not set here; calls fail until it is.",
            style="yellow",
            markup=False,
        )
    if make_default:
        console.print("It is the default connection now.")
    elif not has_default:
        console.print(f"No default connection yet: `proctor models default {name}`", markup=False)
    console.print(f"Check it with `proctor models test {name}`.", markup=False)


def _make_default(store: SqlStore, connection: ModelConnection) -> None:
    if connection.kind != "text":
        raise ConfigError(
            f"{connection.name!r} is an {connection.kind} model; the default must be a text model"
        )
    set_default_connection(store, connection.name)


def _connection_json(
    connection: ModelConnection, default: str | None, supervisor: str | None
) -> dict[str, Any]:
    return {
        **connection.model_dump(mode="json"),
        "endpoint": endpoint(connection),
        "key_set": key_is_set(connection),
        "default": connection.name == default,
        "supervisor": connection.name == supervisor,
    }


@models.command("list")
@json_option()
def list_command(as_json: bool) -> None:
    """List connections, the default and the supervisor's."""
    with readable_store() as store:
        connections = store.list_connections()
        choice = supervisor_choice(store)
    supervisor = choice.connection or choice.pinned
    if as_json:
        print_json(
            {
                "default": choice.default,
                "supervisor": asdict(choice),
                "connections": [
                    _connection_json(c, choice.default, supervisor) for c in connections
                ],
            }
        )
        return
    if not connections:
        console.print("No model connections. Add one with `proctor models add NAME --model M`.")
        return
    columns = (
        Column("name", "id"),
        Column("provider", "text", least=8),
        Column("model", "text", least=12),
        Column("endpoint", "text", drop=1, least=14),
        Column("key", "text", drop=2, least=10),
        Column("role", "text", least=10),
    )
    rows: list[list[str | Text]] = [
        [
            c.name,
            c.provider if c.kind == "text" else f"{c.provider} ({c.kind})",
            c.model,
            endpoint(c),
            _key_note(c),
            _roles(c.name, choice.default, supervisor),
        ]
        for c in connections
    ]
    table = fitted_table(columns, rows, width=console.width)
    console.print(table)
    setting = f"is pinned to {choice.pinned!r}" if choice.pinned else "follows the default"
    if choice.problem is None:
        console.print(f"The supervisor {setting}: it uses {choice.connection!r}.", markup=False)
    else:
        console.print(f"The supervisor cannot run: {choice.problem}", markup=False)


def _roles(name: str, default: str | None, supervisor: str | None) -> str:
    """``default``, ``supervisor``, both or neither: what the connection is used for."""
    held = (("default", default), ("supervisor", supervisor))
    return ", ".join(role for role, holder in held if holder == name)


@models.command("test")
@click.argument("name", required=False)
@json_option()
def test_command(name: str | None, as_json: bool) -> None:
    """Check a connection (default: the default one) with one tiny strict-JSON request."""
    with writable_store() as store:
        connection = resolve_connection(store, name)
        caller = open_caller(connection, limits=pool_limits(store), recorder=store_recorder(store))
        request = ModelRequest(
            messages=(
                ChatMessage("system", "You are checking a connection. Answer with JSON only."),
                ChatMessage("user", 'Reply with {"ok": true}.'),
            ),
            json_schema=_TEST_SCHEMA,
            stage="test",
            max_output_tokens=50,
        )
        started = time.monotonic()
        response = anyio.run(caller.complete, request)
        seconds = time.monotonic() - started
    if response.data is None or not isinstance(response.data.get("ok"), bool):
        raise ModelError(
            "bad_response",
            f"{connection.name!r} answered, but not with the JSON asked for: {response.text[:200]!r}",
        )
    last = response.attempts[-1]
    if as_json:
        print_json(
            {
                "connection": connection.name,
                "model": response.model,
                "seconds": round(seconds, 3),
                "input_tokens": last.input_tokens,
                "output_tokens": last.output_tokens,
                "attempts": len(response.attempts),
            }
        )
        return
    tokens = (
        "not reported"
        if last.input_tokens is None and last.output_tokens is None
        else f"{last.input_tokens} in, {last.output_tokens} out"
    )
    console.print(
        f"OK: {connection.name!r} ({response.model}) answered in {seconds:.2f} s; tokens: {tokens}.",
        markup=False,
    )


@models.command("remove")
@click.argument("name")
def remove_command(name: str) -> None:
    """Delete a saved connection."""
    with writable_store() as store:
        if not store.delete_connection(name):
            raise NotFoundError(f"there is no model connection named {name!r}")
        was_default = default_connection_name(store) == name
        if was_default:
            set_default_connection(store, None)
        pinned = supervisor_pin(store) == name
    console.print(f"Removed connection {name!r}.", markup=False)
    if was_default:
        console.print("It was the default; there is no default now: `proctor models default NAME`.")
    if pinned:
        err_console.print(
            f"Warning: the supervisor is still pinned to {name!r}; supervision fails until you "
            "run `proctor supervisor model NAME` or `proctor supervisor model --follow-default`.",
            style="yellow",
            markup=False,
        )


@models.command("default")
@click.argument("name", required=False)
def default_command(name: str | None) -> None:
    """Show the default connection, or make NAME the default."""
    with writable_store() as store:
        if name is None:
            current = default_connection_name(store)
            console.print(
                f"The default connection is {current!r}."
                if current
                else "No default connection. Set one with `proctor models default NAME`.",
                markup=False,
            )
            return
        connection = store.connection(name)
        if connection is None:
            raise NotFoundError(f"there is no model connection named {name!r}")
        _make_default(store, connection)
    console.print(f"The default connection is {name!r} now.", markup=False)


@models.command("limits")
@click.option("--concurrency", type=click.IntRange(1, 4), help="Model calls at once (1–4).")
@click.option(
    "--stage-timeout", type=click.FloatRange(30, 600), help="Seconds one call may take (30–600)."
)
@click.option(
    "--capacity-kib", type=click.IntRange(100, 16384), help="Largest answer in KiB (100–16384)."
)
@json_option()
def limits_command(
    concurrency: int | None, stage_timeout: float | None, capacity_kib: int | None, as_json: bool
) -> None:
    """Show or change the pool limits (a run keeps the limits it started with)."""
    with writable_store() as store:
        limits = pool_limits(store)
        changes: dict[str, Any] = {
            key: value
            for key, value in (
                ("concurrency", concurrency),
                ("stage_timeout_s", stage_timeout),
                ("capacity_kib", capacity_kib),
            )
            if value is not None
        }
        if changes:
            limits = PoolLimits(**{**asdict(limits), **changes})
            set_pool_limits(store, limits)
    if as_json:
        print_json(asdict(limits))
        return
    console.print(
        f"Concurrency {limits.concurrency}, stage timeout {limits.stage_timeout_s:g} s, "
        f"response capacity {limits.capacity_kib} KiB"
        + (" (saved; runs already started keep their limits)." if changes else ".")
    )
