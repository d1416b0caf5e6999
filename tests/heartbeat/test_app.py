"""The supervisor app switch (SPEC HB-1)."""

from __future__ import annotations

import pytest

from proctor.errors import AppDisabledError, ConfigError
from proctor.heartbeat import app_enabled, require_app, set_app_enabled
from proctor.store import SqlStore


def test_the_app_is_disabled_until_enabled_and_an_explicit_value_is_kept(
    empty_store: SqlStore,
) -> None:
    assert app_enabled(empty_store) is False
    assert empty_store.get_setting("app.enabled") is None

    set_app_enabled(empty_store, True)
    assert app_enabled(empty_store) is True
    set_app_enabled(empty_store, False)
    assert app_enabled(empty_store) is False
    assert empty_store.get_setting("app.enabled") is False


def test_a_request_while_disabled_is_refused_with_how_to_turn_it_on(
    empty_store: SqlStore,
) -> None:
    with pytest.raises(AppDisabledError, match="a manual review is refused") as raised:
        require_app(empty_store, "a manual review")
    assert "proctor app enable" in str(raised.value)
    assert isinstance(raised.value, ConfigError)  # a setting to fix: exit status 2

    set_app_enabled(empty_store, True)
    require_app(empty_store, "a manual review")
