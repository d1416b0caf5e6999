"""Concurrent readers on a real ``proctor serve`` while another process publishes a review.

Bounded in count and time: eight reader threads each make at least 15 requests to the
overview, the latest result's graph and search, and keep going until the writer — a
``proctor review run --reanalyze`` process on the same SQLite file — has published. Every
answer must be a 200 with a well-formed body: no "database is locked", no half-published
graph (a result listed is a result whose graph can be read).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backends import database_env
from tests.loopback import free_port
from tests.server_zygote import forked_serving

READERS = 8
MIN_REQUESTS = 15
MAX_SECONDS = 120.0


class Readers:
    """Reader threads that record every status they got and what failed."""

    def __init__(self, base_url: str, writer: subprocess.Popen[bytes]) -> None:
        self.base_url = base_url
        self.writer = writer
        self.statuses: Counter[int] = Counter()
        self.during_publish = 0
        self.failures: list[str] = []
        self._lock = threading.Lock()

    def read(self, reader: int) -> None:
        stop = time.monotonic() + MAX_SECONDS
        made = 0
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            while time.monotonic() < stop and (made < MIN_REQUESTS or self.writer.poll() is None):
                writing = self.writer.poll() is None
                self._one_round(client, reader, made, writing)
                made += 3

    def _one_round(self, client: httpx.Client, reader: int, made: int, writing: bool) -> None:
        results = self._get(client, "/api/results", {"limit": 5}, writing)
        if results is not None and results["results"]:
            latest = results["results"][0]["result_id"]
            graph = self._get(client, f"/api/results/{latest}/graph", {"limit": 50}, writing)
            if graph is not None and "events" not in graph:
                self._fail(f"graph of {latest} has no events list: {sorted(graph)}")
        words = ("test", "error", "file", "commit", "install")
        self._get(client, "/api/search", {"q": words[(reader + made) % len(words)]}, writing)

    def _get(
        self, client: httpx.Client, url: str, params: dict[str, object], writing: bool
    ) -> dict[str, Any] | None:
        try:
            response = client.get(url, params=params)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            self._fail(f"{url}: {type(exc).__name__}: {exc}")
            return None
        with self._lock:
            self.statuses[response.status_code] += 1
            self.during_publish += writing
        if response.status_code != 200:
            self._fail(f"{url}: {response.status_code} {response.text[:300]}")
            return None
        body: dict[str, Any] = response.json()
        return body

    def _fail(self, message: str) -> None:
        with self._lock:
            self.failures.append(message)


@pytest.mark.slow
def test_overview_graph_and_search_hold_under_concurrent_readers_while_a_review_publishes(
    database: Path,
) -> None:
    port = free_port()
    env = {
        "PROCTOR_HOME": str(database.parent),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": "",
        **database_env(database.parent),
    }
    serve = ["serve", "--port", str(port)]
    with forked_serving([*serve, "--no-heartbeat"], env, port):
        base_url = f"http://127.0.0.1:{port}"
        before = httpx.get(f"{base_url}/api/results", params={"limit": 100}).json()["results"]
        review = [sys.executable, "-m", "proctor.cli.main", "review", "run", "--reanalyze"]
        writer = subprocess.Popen(
            [*review, "--batch-size", "5", "--json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        readers = Readers(base_url, writer)
        threads = [threading.Thread(target=readers.read, args=(n,)) for n in range(READERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(MAX_SECONDS + 30)
        out, err = writer.communicate(timeout=MAX_SECONDS)
        after = httpx.get(f"{base_url}/api/results", params={"limit": 100}).json()["results"]

    assert writer.returncode == 0, err.decode()
    assert readers.failures == []
    assert set(readers.statuses) == {200}
    assert sum(readers.statuses.values()) >= READERS * MIN_REQUESTS
    assert readers.during_publish > 0, "no request overlapped the review"
    assert len(after) == len(before) + 1, out.decode()
