"""Which connection an execution uses (SPEC MOD-2, MOD-3): resolved once, never a fallback.

The supervisor follows the default connection or one pinned connection. A connection that
cannot serve (gone, an embedding model, its key variable unset, its GGUF file missing)
fails the resolution with a message naming the setting or command that fixes it; another
connection is never tried in its place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.errors import ModelError
from proctor.model_types import ModelConnection
from proctor.models._settings import default_connection_name, supervisor_pin

if TYPE_CHECKING:
    from proctor.store import ModelSettingsReader

_REPIN = "run `proctor supervisor model NAME` or `proctor supervisor model --follow-default`"
_NEW_DEFAULT = "run `proctor models default NAME`"


def key_is_set(connection: ModelConnection) -> bool:
    """True when the connection needs no key or its key variable holds a value."""
    return connection.api_key_env is None or bool(os.environ.get(connection.api_key_env))


def unusable_reason(connection: ModelConnection) -> str | None:
    """Why ``connection`` cannot serve text requests now, or None when it can."""
    if connection.kind != "text":
        return f"is an {connection.kind} model, not a text model"
    if not key_is_set(connection):
        return (
            f"needs its key in the environment variable {connection.api_key_env}, which is not set"
        )
    if connection.provider == "local" and not (connection.path and Path(connection.path).is_file()):
        return f"names a GGUF file that does not exist ({connection.path})"
    return None


def resolve_default_connection(store: ModelSettingsReader) -> ModelConnection:
    """The default connection, checked usable."""
    name = default_connection_name(store)
    if name is None:
        raise ModelError(
            "config",
            "no default model connection is set; run `proctor models add NAME --provider … "
            "--default` or `proctor models default NAME`",
        )
    connection = store.connection(name)
    if connection is None:
        raise ModelError(
            "config", f"the default connection {name!r} no longer exists; {_NEW_DEFAULT}"
        )
    reason = unusable_reason(connection)
    if reason is not None:
        fix = (
            f"set {connection.api_key_env} or {_NEW_DEFAULT}"
            if not key_is_set(connection)
            else _NEW_DEFAULT
        )
        raise ModelError("config", f"the default connection {name!r} {reason}; {fix}")
    return connection


def resolve_supervisor_connection(store: ModelSettingsReader) -> ModelConnection:
    """The connection the supervisor uses for this execution: the pinned one or the default."""
    pinned = supervisor_pin(store)
    if pinned is None:
        return resolve_default_connection(store)
    connection = store.connection(pinned)
    if connection is None:
        raise ModelError(
            "config",
            f"the supervisor is pinned to connection {pinned!r}, which no longer exists; {_REPIN}",
        )
    reason = unusable_reason(connection)
    if reason is not None:
        fix = f"set {connection.api_key_env} or {_REPIN}" if not key_is_set(connection) else _REPIN
        raise ModelError(
            "config", f"the supervisor is pinned to connection {pinned!r}, which {reason}; {fix}"
        )
    return connection


def resolve_connection(store: ModelSettingsReader, name: str | None) -> ModelConnection:
    """Connection ``name`` (the default when None), checked usable (evals, ``models test``)."""
    if name is None:
        return resolve_default_connection(store)
    connection = store.connection(name)
    if connection is None:
        raise ModelError(
            "config", f"there is no model connection named {name!r}; see `proctor models list`"
        )
    reason = unusable_reason(connection)
    if reason is not None:
        raise ModelError("config", f"connection {name!r} {reason}")
    return connection


@dataclass(frozen=True, slots=True)
class SupervisorChoice:
    """The supervisor's connection setting and what it resolves to now (for display)."""

    pinned: str | None
    """The pinned connection's name; None when the supervisor follows the default."""
    default: str | None
    """The default connection's name, if any."""
    connection: str | None
    """The connection an execution starting now would use; None when resolution fails."""
    problem: str | None
    """Why resolution fails, as the run would report it."""


def supervisor_choice(store: ModelSettingsReader) -> SupervisorChoice:
    """The supervisor's setting and its resolution now, failures included, never raised."""
    pinned, default = supervisor_pin(store), default_connection_name(store)
    try:
        resolved = resolve_supervisor_connection(store)
    except ModelError as exc:
        return SupervisorChoice(pinned, default, None, str(exc))
    return SupervisorChoice(pinned, default, resolved.name, None)
