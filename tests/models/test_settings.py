"""Pool limits and connection settings kept in the store (SPEC MOD-2, MOD-4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.errors import ConfigError
from proctor.models import (
    PoolLimits,
    default_connection_name,
    pin_supervisor,
    pool_limits,
    set_default_connection,
    set_pool_limits,
    supervisor_pin,
)
from proctor.models._settings import POOL_LIMITS_KEY
from proctor.store import open_store


def test_limits_default_to_mod_4s_values_and_round_trip(tmp_path: Path) -> None:
    store = open_store(tmp_path / "p.db")
    assert pool_limits(store) == PoolLimits(concurrency=1, stage_timeout_s=240, capacity_kib=1024)
    set_pool_limits(store, PoolLimits(concurrency=3, stage_timeout_s=45, capacity_kib=200))
    assert pool_limits(store) == PoolLimits(concurrency=3, stage_timeout_s=45, capacity_kib=200)
    store.close()


@pytest.mark.parametrize(
    "limits",
    [
        {"concurrency": 0},
        {"concurrency": 5},
        {"stage_timeout_s": 29.9},
        {"stage_timeout_s": 601},
        {"capacity_kib": 99},
        {"capacity_kib": 16385},
    ],
)
def test_limits_outside_mod_4s_ranges_are_refused(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        PoolLimits(**limits)  # type: ignore[arg-type]


def test_invalid_stored_limits_say_how_to_fix_them(tmp_path: Path) -> None:
    store = open_store(tmp_path / "p.db")
    store.set_setting(POOL_LIMITS_KEY, {"stage_timeout_s": 5})
    with pytest.raises(ConfigError, match="proctor models limits"):
        pool_limits(store)
    store.close()


def test_the_default_and_the_supervisor_pin_are_set_and_cleared(tmp_path: Path) -> None:
    store = open_store(tmp_path / "p.db")
    assert (default_connection_name(store), supervisor_pin(store)) == (None, None)
    set_default_connection(store, "a")
    pin_supervisor(store, "b")
    assert (default_connection_name(store), supervisor_pin(store)) == ("a", "b")
    set_default_connection(store, None)
    pin_supervisor(store, None)
    assert (default_connection_name(store), supervisor_pin(store)) == (None, None)
    store.close()
