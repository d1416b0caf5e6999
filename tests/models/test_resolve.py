"""Which connection an execution uses (SPEC MOD-2, MOD-3): never a fallback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.errors import ModelError
from proctor.models import (
    ModelConnection,
    PoolLimits,
    open_caller,
    pin_supervisor,
    resolve_connection,
    resolve_supervisor_connection,
    set_default_connection,
)
from proctor.store import SqlStore, open_store
from proctor.testing.scripted_model import ScriptedModelServer
from tests.models.helpers import complete

REPIN = "`proctor supervisor model NAME` or `proctor supervisor model --follow-default`"


def _connection(name: str, **fields: object) -> ModelConnection:
    return ModelConnection.model_validate(
        {"name": name, "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
        | fields
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "p.db")
    opened.save_connection(_connection("main"))
    opened.save_connection(_connection("other"))
    set_default_connection(opened, "main")
    yield opened
    opened.close()


def test_the_supervisor_follows_the_default_until_pinned(store: SqlStore) -> None:
    assert resolve_supervisor_connection(store).name == "main"
    pin_supervisor(store, "other")
    assert resolve_supervisor_connection(store).name == "other"
    pin_supervisor(store, None)
    set_default_connection(store, "other")
    assert resolve_supervisor_connection(store).name == "other"


def test_a_pinned_connection_that_is_gone_fails_without_falling_back(store: SqlStore) -> None:
    pin_supervisor(store, "other")
    store.delete_connection("other")
    with pytest.raises(ModelError) as caught:
        resolve_supervisor_connection(store)
    assert caught.value.kind == "config"
    assert str(caught.value) == (
        "the supervisor is pinned to connection 'other', which no longer exists; run " + REPIN
    )


def test_a_pinned_embedding_model_fails_without_falling_back(store: SqlStore) -> None:
    store.save_connection(_connection("vectors", kind="embedding"))
    pin_supervisor(store, "vectors")
    with pytest.raises(ModelError, match="embedding model, not a text model") as caught:
        resolve_supervisor_connection(store)
    assert REPIN in str(caught.value)


def test_a_pinned_connection_without_its_key_names_the_variable_and_the_setting(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PINNED_KEY", raising=False)
    store.save_connection(_connection("keyed", api_key_env="PINNED_KEY"))
    pin_supervisor(store, "keyed")
    with pytest.raises(ModelError) as caught:
        resolve_supervisor_connection(store)
    assert "PINNED_KEY, which is not set" in str(caught.value)
    assert "set PINNED_KEY or run " + REPIN in str(caught.value)
    monkeypatch.setenv("PINNED_KEY", "value")
    assert resolve_supervisor_connection(store).name == "keyed"


def test_without_a_default_resolution_says_how_to_add_one(tmp_path: Path) -> None:
    empty = open_store(tmp_path / "empty.db")
    with pytest.raises(ModelError, match="proctor models add") as caught:
        resolve_supervisor_connection(empty)
    assert caught.value.kind == "config"
    empty.close()


def test_a_named_connection_is_checked_like_the_supervisors(store: SqlStore) -> None:
    assert resolve_connection(store, "other").name == "other"
    assert resolve_connection(store, None).name == "main"
    with pytest.raises(ModelError, match="no model connection named 'nope'"):
        resolve_connection(store, "nope")
    store.save_connection(_connection("local", provider="local", path="/no/such.gguf"))
    with pytest.raises(ModelError, match="GGUF file that does not exist"):
        resolve_connection(store, "local")


def test_a_running_caller_keeps_its_connection_when_the_default_changes(
    store: SqlStore,
) -> None:
    with ScriptedModelServer([{"ok": True}]) as first, ScriptedModelServer() as second:
        store.save_connection(first.connection("first"))
        store.save_connection(second.connection("second"))
        set_default_connection(store, "first")
        caller = open_caller(resolve_supervisor_connection(store), limits=PoolLimits())
        set_default_connection(store, "second")
        assert complete(caller).connection == "first"
        assert (len(first.requests), len(second.requests)) == (1, 0)
