"""The model settings kept in the store: the default connection, the supervisor's, the pool limits."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from proctor.errors import ConfigError
from proctor.model_types import PoolLimits

if TYPE_CHECKING:
    from proctor.store import ModelSettings, ModelSettingsReader

DEFAULT_CONNECTION_KEY = "models.default"
"""Name of the default connection (unset: none)."""
SUPERVISOR_CONNECTION_KEY = "supervisor.connection"
"""Name of the connection the supervisor is pinned to (unset: it follows the default)."""
POOL_LIMITS_KEY = "models.pool"
"""The pool's limits as a JSON object (unset: the defaults)."""


def default_connection_name(store: ModelSettingsReader) -> str | None:
    """The default connection's name, or None when no default is set."""
    value = store.get_setting(DEFAULT_CONNECTION_KEY)
    return value if isinstance(value, str) else None


def set_default_connection(store: ModelSettings, name: str | None) -> None:
    """Make ``name`` the default connection (None: no default)."""
    store.set_setting(DEFAULT_CONNECTION_KEY, name)


def supervisor_pin(store: ModelSettingsReader) -> str | None:
    """The connection the supervisor is pinned to, or None when it follows the default."""
    value = store.get_setting(SUPERVISOR_CONNECTION_KEY)
    return value if isinstance(value, str) else None


def pin_supervisor(store: ModelSettings, name: str | None) -> None:
    """Pin the supervisor to connection ``name`` (None: follow the default)."""
    store.set_setting(SUPERVISOR_CONNECTION_KEY, name)


def pool_limits(store: ModelSettingsReader) -> PoolLimits:
    """The pool limits a run starting now freezes (SPEC MOD-4)."""
    value = store.get_setting(POOL_LIMITS_KEY)
    if value is None:
        return PoolLimits()
    try:
        return PoolLimits(**value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"the stored pool limits {value!r} are invalid ({exc}); "
            "set them again with `proctor models limits`"
        ) from exc


def set_pool_limits(store: ModelSettings, limits: PoolLimits) -> None:
    """Store the pool limits; runs already started keep the ones they froze."""
    store.set_setting(POOL_LIMITS_KEY, asdict(limits))
