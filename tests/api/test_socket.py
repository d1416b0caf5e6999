"""``proctor serve`` on a real loopback socket, with a token (SPEC UI-2)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

TOKEN = "a-long-random-test-token"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes], deadline: float = 20.0) -> None:
    stop = time.monotonic() + deadline
    while time.monotonic() < stop:
        if process.poll() is not None:
            raise AssertionError(f"proctor serve exited: {process.stderr.read()!r}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listened on port {port}")


@pytest.fixture
def server(database: Path) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "proctor.cli.main", "serve", "--port", str(port)],
        env={
            "PROCTOR_HOME": str(database.parent),
            "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
            "PROCTOR_API_TOKEN": TOKEN,
            "PATH": "",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        process.stderr.close()


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
