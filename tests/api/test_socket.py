"""``proctor serve`` on a real loopback socket, with a token (SPEC UI-2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.backends import database_env
from tests.loopback import free_port
from tests.server_zygote import forked_serving

TOKEN = "a-long-random-test-token"


@pytest.fixture
def server(database: Path) -> Iterator[str]:
    port = free_port()
    command = ["serve", "--port", str(port)]
    env = {
        "PROCTOR_HOME": str(database.parent),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PROCTOR_API_TOKEN": TOKEN,
        "PATH": "",
        **database_env(database.parent),
    }
    with forked_serving(command, env, port):
        yield f"http://127.0.0.1:{port}"


@pytest.mark.slow
def test_proctor_serve_answers_over_http_only_with_the_token(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as anonymous:
        assert anonymous.get("/api/health").status_code == 401
        wrong = anonymous.get("/api/health", headers={"Authorization": "Bearer guess"})
        assert wrong.status_code == 401
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server, headers=headers, timeout=10) as client:
        assert client.get("/api/health").json()["status"] == "ok"
        results = client.get("/api/results").json()["results"]
        assert results
        graph = client.get(f"/api/results/{results[0]['result_id']}/graph", params={"limit": 3})
        assert graph.status_code == 200
        assert graph.json()["result"]["result_id"] == results[0]["result_id"]
        assert client.get("/api/conversations", params={"limit": 500}).status_code == 422
