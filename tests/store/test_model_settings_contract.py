"""Settings, model connections and model usage in the store on every backend (SPEC MOD-1…4)."""

from __future__ import annotations

from datetime import timedelta

from proctor._util.clock import utcnow
from proctor.models import AttemptUsage, ModelConnection
from proctor.store import SqlStore


def _connection(name: str = "main", **fields: object) -> ModelConnection:
    return ModelConnection.model_validate(
        {"name": name, "provider": "openai", "model": "gpt-test", "api_key_env": "OPENAI_API_KEY"}
        | fields
    )


def test_a_connection_is_saved_replaced_listed_and_deleted(store: SqlStore) -> None:
    store.save_connection(_connection())
    store.save_connection(_connection("local", provider="local", path="/m.gguf", api_key_env=None))
    saved = store.connection("main")
    assert saved is not None
    assert saved.created_at is not None and saved.created_at.tzinfo is not None
    assert saved.model_dump(exclude={"created_at"}) == _connection().model_dump(
        exclude={"created_at"}
    )
    store.save_connection(_connection(model="gpt-other", kind="embedding"))
    replaced = store.connection("main")
    assert replaced is not None and (replaced.model, replaced.kind) == ("gpt-other", "embedding")
    assert [c.name for c in store.list_connections()] == ["local", "main"]
    assert store.delete_connection("main") is True
    assert store.delete_connection("main") is False
    assert store.connection("main") is None


def test_settings_hold_json_values_and_none_removes_them(store: SqlStore) -> None:
    assert store.get_setting("models.pool") is None
    store.set_setting("models.pool", {"concurrency": 2, "stage_timeout_s": 60.0})
    store.set_setting("models.default", "main")
    assert store.get_setting("models.pool") == {"concurrency": 2, "stage_timeout_s": 60.0}
    store.set_setting("models.default", "other")
    assert store.get_setting("models.default") == "other"
    store.set_setting("models.default", None)
    assert store.get_setting("models.default") is None


def test_usage_is_one_row_per_attempt_and_unknown_usage_is_counted_not_estimated(
    store: SqlStore,
) -> None:
    before = utcnow()
    attempts = [
        AttemptUsage(1, None, None, "rate_limited", 0.2),
        AttemptUsage(2, 120, 30, "ok", 1.5),
    ]
    store.record_model_attempts(_connection(), "supervise", attempts, target_id="c1", run_id="r1")
    store.record_model_attempts(
        _connection(), "intent", [AttemptUsage(1, 10, None, "ok", 0.1)], target_id="c2", run_id=None
    )
    everything = store.model_usage()
    assert (everything.calls, everything.input_tokens, everything.output_tokens) == (3, 130, 30)
    assert everything.unknown_usage == 2
    run = store.model_usage(run_id="r1")
    assert (run.calls, run.input_tokens, run.output_tokens, run.unknown_usage) == (2, 120, 30, 1)
    assert store.model_usage(target_id="c2").calls == 1
    assert store.model_usage(since=before).calls == 3
    assert store.model_usage(since=utcnow() + timedelta(seconds=1)).calls == 0


def test_recording_no_attempts_writes_nothing(store: SqlStore) -> None:
    store.record_model_attempts(_connection(), "test", [], target_id=None, run_id=None)
    assert store.model_usage().calls == 0
