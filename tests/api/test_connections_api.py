"""Model connections, the supervisor's model and the pool over HTTP; no secret ever leaves."""

from __future__ import annotations

import pytest

from proctor.models import ModelConnection, PoolLimits, set_default_connection, set_pool_limits
from proctor.store import SqlStore
from tests.api.conftest import Api

KEY = "sk-live-0123456789-very-secret"
URL_PASSWORD = "hunter2-url-password"
QUERY_TOKEN = "query-token-secret"


@pytest.fixture
def configured(api: Api, monkeypatch: pytest.MonkeyPatch) -> Api:
    """Three connections: one whose key is set here, one keyless, one embedding model."""
    monkeypatch.setenv("PROCTOR_TEST_KEY", KEY)
    store: SqlStore = api.app.state.store_holder.get()
    store.save_connection(
        ModelConnection(
            name="work",
            provider="openai",
            model="gpt-test",
            base_url=f"https://me:{URL_PASSWORD}@models.example/v1?key={QUERY_TOKEN}",
            api_key_env="PROCTOR_TEST_KEY",
        )
    )
    store.save_connection(
        ModelConnection(
            name="box",
            provider="openai",
            model="local-test",
            base_url="http://127.0.0.1:9/v1",
            api_key_env="PROCTOR_UNSET_KEY",
        )
    )
    store.save_connection(
        ModelConnection(name="vectors", provider="openai", model="embed", kind="embedding")
    )
    set_default_connection(store, "work")
    set_pool_limits(store, PoolLimits(concurrency=2, stage_timeout_s=120, capacity_kib=512))
    return api


def test_connections_are_listed_with_the_key_variable_never_the_key(configured: Api) -> None:
    listing = configured.get("/api/connections").json()
    assert listing["default"] == "work"
    assert listing["supervisor"]["connection"] == "work"
    by_name = {c["name"]: c for c in listing["connections"]}
    work = by_name["work"]
    assert work["key_env"] == "PROCTOR_TEST_KEY" and work["has_key"] is True
    assert work["endpoint"] == "https://models.example/v1"
    assert work["default"] is True and work["supervisor"] is True
    assert by_name["box"]["has_key"] is False
    assert by_name["vectors"]["kind"] == "embedding"
    assert configured.get("/api/connections/box").json() == by_name["box"]
    assert configured.get("/api/connections/nothing").status_code == 404


def test_the_supervisor_is_pinned_and_unpinned(configured: Api) -> None:
    pinned = configured.call("PUT", "/api/supervisor/model", json={"connection": "box"})
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()["pinned"] == "box"
    assert configured.get("/api/supervisor/model").json()["pinned"] == "box"
    # box's key is not set here: the choice says why the supervisor cannot run.
    assert "PROCTOR_UNSET_KEY" in (pinned.json()["problem"] or "")

    followed = configured.call("PUT", "/api/supervisor/model", json={"connection": None})
    assert followed.json() == {
        "pinned": None,
        "default": "work",
        "connection": "work",
        "problem": None,
    }


def test_pinning_refuses_unknown_and_embedding_connections(configured: Api) -> None:
    missing = configured.call("PUT", "/api/supervisor/model", json={"connection": "nope"})
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
    embedding = configured.call("PUT", "/api/supervisor/model", json={"connection": "vectors"})
    assert 400 <= embedding.status_code < 500 and "text model" in embedding.json()["detail"]
    assert configured.call("PUT", "/api/supervisor/model", json={}).status_code == 422
    assert configured.get("/api/supervisor/model").json()["pinned"] is None


def test_the_pool_limits_are_read(configured: Api) -> None:
    assert configured.get("/api/model-pool").json() == {
        "concurrency": 2,
        "stage_timeout_s": 120.0,
        "capacity_kib": 512,
    }


@pytest.mark.slow
def test_no_response_of_any_read_endpoint_carries_a_secret(configured: Api) -> None:
    paths = configured.get("/openapi.json").json()["paths"]
    read = [p for p, ops in paths.items() if "get" in ops and "{" not in p and "search" not in p]
    read += ["/api/connections/work", "/api/connections/box", "/openapi.json"]
    assert "/api/connections" in read and "/api/supervisor/model" in read
    for path in read:
        # An event stream stays open until its max_seconds (300 by default): read a short one.
        response = configured.get(f"{path}?max_seconds=0.2" if path.endswith("/stream") else path)
        assert response.status_code < 500, (path, response.text)
        if "connection" in path or "model" in path:
            assert response.status_code == 200, (path, response.text)
        for secret in (KEY, URL_PASSWORD, QUERY_TOKEN):
            assert secret not in response.text, path
    pinned = configured.call("PUT", "/api/supervisor/model", json={"connection": "work"})
    assert KEY not in pinned.text and URL_PASSWORD not in pinned.text
