"""A real token-less ``proctor serve`` on loopback, driven as a web page would drive it (issue 16).

Before the request guard, each of these was answered with 200: a cross-site ``text/plain``
POST to the intake stored a planted conversation, a body-less POST removed a graph entity,
and a request naming a rebound host (``Host: attacker.test:PORT``) read the conversations.
The requests below carry the headers Chromium sends for such a page; clients that are not
browsers (curl, exporters, Claude Code's HTTP hook) keep working.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from tests.backends import copy_database, server_env
from tests.loopback import free_port
from tests.server_zygote import forked_serving

pytestmark = pytest.mark.slow  # Proctor servers

PLANTED = (
    b'{"type": "message", "conversation_id": "planted", "message_id": "m1", '
    b'"role": "user", "text": "planted by a web page"}\n'
)
FROM_A_PAGE = {"Origin": "http://localhost:9", "Sec-Fetch-Site": "same-site"}
"""What Chromium adds to a request of a page on another local port (one site: localhost)."""


class Server(NamedTuple):
    url: str
    port: int


@contextmanager
def _serve(database: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    port = free_port()
    command = ["serve", "--port", str(port), *args]
    environment = {
        "PROCTOR_HOME": str(database.parent),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": "",
        **server_env(database.parent),
        **(env or {}),
    }
    with forked_serving([*command, "--no-heartbeat"], environment, port):
        yield Server(f"http://127.0.0.1:{port}", port)


ALLOWED_HOSTS = {"PROCTOR_ALLOWED_HOSTS": "proxy.test, other.test:1"}


@pytest.fixture(scope="module")
def server(prepared_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests that only read or are refused, on a copy of its own: a
    refused request writes nothing, so none of them sees another (a test whose requests
    are meant to write starts its own server, on its own copy)."""
    database = tmp_path_factory.mktemp("refusing") / "proctor.db"
    copy_database(prepared_database, database)
    with _serve(database, env=ALLOWED_HOSTS) as served:
        yield served


def _conversations(server: Server) -> set[str]:
    answer = httpx.get(f"{server.url}/api/conversations", params={"limit": 100}, timeout=10)
    return {row["conversation"]["conversation_id"] for row in answer.json()["conversations"]}


def _an_entity(server: Server) -> tuple[str, str]:
    result_id = httpx.get(f"{server.url}/api/results", timeout=10).json()["results"][0]
    graph = httpx.get(f"{server.url}/api/results/{result_id['result_id']}/graph", timeout=10)
    return result_id["result_id"], graph.json()["entities"][0]["entity_id"]


def _state(server: Server, result_id: str, entity_id: str) -> str:
    graph = httpx.get(f"{server.url}/api/results/{result_id}/graph", timeout=10).json()
    return str(next(e["state"] for e in graph["entities"] if e["entity_id"] == entity_id))


def test_a_page_s_text_plain_post_plants_no_conversation(server: Server) -> None:
    attempts = [
        FROM_A_PAGE | {"Content-Type": "text/plain;charset=UTF-8"},  # fetch(url, {body})
        {"Content-Type": "text/plain"},  # a browser that sends no Origin
        FROM_A_PAGE | {"Content-Type": "application/x-www-form-urlencoded"},  # a form
    ]
    answers = [
        httpx.post(f"{server.url}/api/intake/events", content=PLANTED, headers=h, timeout=10)
        for h in attempts
    ]

    assert [a.status_code for a in answers] == [403, 415, 403]
    assert "pj:planted" not in _conversations(server)


def test_a_page_s_body_less_post_removes_nothing(server: Server) -> None:
    result_id, entity_id = _an_entity(server)
    url = f"{server.url}/api/graph/entity/{entity_id}/remove"

    from_a_page = httpx.post(url, headers=FROM_A_PAGE, timeout=10)
    without_origin = httpx.post(url, timeout=10)

    assert (from_a_page.status_code, without_origin.status_code) == (403, 403)
    assert _state(server, result_id, entity_id) != "removed"


def test_a_rebound_host_name_reads_nothing(server: Server) -> None:
    rebound = {"Host": f"attacker.test:{server.port}"}
    answers = [
        httpx.get(f"{server.url}{path}", headers=rebound, timeout=10)
        for path in ("/api/conversations", "/api/findings", "/openapi.json", "/")
    ]

    assert [a.status_code for a in answers] == [421] * 4
    known = _conversations(server)
    assert known and not any(c in a.text for a in answers for c in known)


def test_curl_exporters_and_hooks_keep_working(database: Path) -> None:
    hook: dict[str, Any] = {
        "session_id": "s1",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    with _serve(database, env=ALLOWED_HOSTS) as server:  # these write: a server of its own
        ndjson = {"Content-Type": "application/x-ndjson"}
        stored = httpx.post(
            f"{server.url}/api/intake/events", content=PLANTED, headers=ndjson, timeout=30
        )  # the first intake imports the job queue and supervision (lazily, since 1501f15)
        otlp = httpx.post(f"{server.url}/v1/traces", json={"resourceSpans": []}, timeout=10)
        gate = httpx.post(f"{server.url}/api/gate/claude-code", json=hook, timeout=30)
        result_id, entity_id = _an_entity(server)
        removed = httpx.post(
            f"{server.url}/api/graph/entity/{entity_id}/remove",
            headers={"X-Proctor-Client": "curl"},
            timeout=10,
        )

        assert [a.status_code for a in (stored, otlp, gate, removed)] == [200] * 4
        assert "pj:planted" in _conversations(server)
        assert _state(server, result_id, entity_id) == "removed"


def test_the_allowed_hosts_variable_adds_names(server: Server) -> None:
    def health(host: str) -> int:
        return httpx.get(f"{server.url}/api/health", headers={"Host": host}, timeout=10).status_code

    assert health("proxy.test") == 200
    assert health(f"proxy.test:{server.port}") == 200
    assert health("other.test:1") == 200
    assert health(f"other.test:{server.port}") == 421
    assert health(f"localhost:{server.port}") == 200


def test_the_allowed_host_option_adds_names(database: Path) -> None:
    with _serve(database, "--allowed-host", "proctor.example.org") as served:
        answer = httpx.get(
            f"{served.url}/api/health", headers={"Host": "proctor.example.org"}, timeout=10
        )
        refused = httpx.get(f"{served.url}/api/health", headers={"Host": "x.test"}, timeout=10)
        assert (answer.status_code, refused.status_code) == (200, 421)
        assert "--allowed-host" in refused.json()["detail"]


def test_an_allowed_host_that_is_not_a_name_stops_the_server_with_a_sentence(
    proctor_home: Path,
) -> None:
    """Before any store is opened: the home has none (so the PostgreSQL pass, which runs
    the tests that reach a store, leaves this one out)."""
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "proctor.cli.main",
            "serve",
            "--allowed-host",
            "https://proctor.example.org/",
        ],
        env={"PROCTOR_HOME": str(proctor_home), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert completed.returncode == 2
    assert "no scheme, no path" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not (proctor_home / "proctor.db").exists()
