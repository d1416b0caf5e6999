"""A web page must not be a client (issue 16): the request guard, case by case, in process.

The app is built as ``proctor serve`` builds it for 127.0.0.1:8700 without a token. Each
refusal is tried with the requests a page of another site can send without a CORS
preflight (text/plain and form bodies, a body-less POST, a JSON body without a type), and
each allowed case with what real clients send (the UI, curl, exporters, hooks).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from proctor.api import create_app
from proctor.api._guard import parse_allowed_host, server_hosts
from proctor.errors import ConfigError
from proctor.store import SqlStore, open_store
from tests.api.conftest import run

SERVER = "127.0.0.1:8700"
PLANTED = (
    b'{"type": "message", "conversation_id": "planted", "message_id": "m1", '
    b'"role": "user", "text": "planted by a web page"}\n'
)


def send(
    app: FastAPI,
    method: str,
    path: str,
    *,
    host: str = SERVER,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    json: Any = None,
) -> httpx.Response:
    """One request to ``app`` with exactly these headers (and the ``Host`` given)."""

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{SERVER}") as client:
            return await client.request(
                method, path, headers={"Host": host, **(headers or {})}, content=content, json=json
            )

    return run(call)


@pytest.fixture
def app(database: Path) -> Iterator[FastAPI]:
    served = create_app(lambda: open_store(database), token=None, host="127.0.0.1", port=8700)
    try:
        yield served
    finally:
        served.state.store_holder.close()


def _no_store() -> SqlStore:
    raise AssertionError("a request the guard refuses, or one that needs no data, opens no store")


@pytest.fixture
def storeless_app() -> FastAPI:
    """The same app over no store: what it answers here, it answers before (or without)
    opening one. Its tests take no copy of the prepared database, so the PostgreSQL pass
    leaves them out (``tests/store_use.py``): they run the same code on either backend."""
    return create_app(_no_store, token=None, host="127.0.0.1", port=8700)


def conversation_ids(app: FastAPI) -> set[str]:
    answer = send(app, "GET", "/api/conversations", headers={}).json()
    return {row["conversation"]["conversation_id"] for row in answer["conversations"]}


def first_entity(app: FastAPI) -> tuple[str, str]:
    """A result of the store and the id of one entity in it."""
    result_id = send(app, "GET", "/api/results").json()["results"][0]["result_id"]
    graph = send(app, "GET", f"/api/results/{result_id}/graph").json()
    return result_id, graph["entities"][0]["entity_id"]


def entity_state(app: FastAPI, result_id: str, entity_id: str) -> str:
    """The entity's state: ``removed`` once a person (or a page) removed it."""
    graph = send(app, "GET", f"/api/results/{result_id}/graph").json()
    return str(next(e["state"] for e in graph["entities"] if e["entity_id"] == entity_id))


# Host: DNS rebinding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "attacker.test",
        "attacker.test:8700",
        "ATTACKER.test:8700",
        "127.0.0.1:8701",  # the right address, another port
        "localhost:80",
        "localhost",  # port 80 implied
        "[::2]:8700",
        "127.0.0.1.nip.io:8700",
        "localhost:8700.attacker.test",
        "localhost@attacker.test:8700",
        "",
    ],
)
@pytest.mark.parametrize("path", ["/api/conversations", "/openapi.json", "/"])
def test_a_request_naming_another_host_is_answered_421_without_data(
    storeless_app: FastAPI, host: str, path: str
) -> None:
    refused = send(storeless_app, "GET", path, host=host)

    assert refused.status_code == 421
    detail = refused.json()["detail"]
    assert "--allowed-host" in detail and "127.0.0.1:8700" in detail
    assert "conversation" not in refused.text  # no data rides on the refusal
    assert refused.headers["x-content-type-options"] == "nosniff"


def test_a_write_naming_another_host_stores_nothing(app: FastAPI) -> None:
    before = conversation_ids(app)
    refused = send(
        app,
        "POST",
        "/api/intake/events",
        host="attacker.test:8700",
        headers={"Content-Type": "application/x-ndjson"},
        content=PLANTED,
    )

    assert refused.status_code == 421
    assert conversation_ids(app) == before


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8700", "localhost:8700", "LocalHost:8700", "[::1]:8700"]
)
def test_the_loopback_names_with_the_bound_port_are_answered(
    storeless_app: FastAPI, host: str
) -> None:
    assert send(storeless_app, "GET", "/api/health", host=host).json()["status"] == "ok"
    assert send(storeless_app, "GET", "/", host=host).status_code == 200


def test_an_app_without_a_known_port_answers_the_loopback_names_on_any_port() -> None:
    app = create_app(_no_store, token=None)
    for host in ("127.0.0.1:1234", "localhost", "[::1]:9"):
        assert send(app, "GET", "/api/health", host=host).status_code == 200, host
    assert send(app, "GET", "/api/health", host="attacker.test:1234").status_code == 421


def test_allowed_hosts_add_names_with_any_port_or_with_theirs() -> None:
    app = create_app(
        _no_store,
        token=None,
        port=8700,
        allowed_hosts=["Proctor.Example.org", "proctor.lan:8443", "[fd00::5]:8700", "fd00::6"],
    )
    for host in ("proctor.example.org", "proctor.example.org:443", "proctor.lan:8443"):
        assert send(app, "GET", "/api/health", host=host).status_code == 200, host
    for host in ("[fd00::5]:8700", "[fd00::6]:1", "[FD00::6]"):
        assert send(app, "GET", "/api/health", host=host).status_code == 200, host
    for host in ("proctor.lan", "proctor.lan:8700", "example.org", "[fd00::5]:1"):
        assert send(app, "GET", "/api/health", host=host).status_code == 421, host


def test_a_server_bound_to_another_address_with_a_token_answers_to_that_address() -> None:
    hosts = server_hosts("192.168.1.4", 8700, token=True)
    assert hosts.accepts("192.168.1.4:8700") and hosts.accepts("localhost:8700")
    assert not hosts.accepts("192.168.1.4:8701") and not hosts.accepts("attacker.test:8700")

    v6 = server_hosts("fd00::5", 8700, token=True)
    assert v6.accepts("[fd00::5]:8700") and not v6.accepts("fd00::5")


def test_a_wildcard_bind_answers_any_name_only_with_a_token() -> None:
    assert server_hosts("0.0.0.0", 8700, token=True).accepts("my-laptop.lan:8700")
    assert server_hosts("::", 8700, token=True).accepts("10.0.0.7:8700")
    guarded = server_hosts("0.0.0.0", 8700, token=False)
    assert not guarded.accepts("my-laptop.lan:8700") and not guarded.accepts("0.0.0.0:8700")
    assert guarded.accepts("127.0.0.1:8700")


@pytest.mark.parametrize(
    "entry", ["http://proctor.example.org", "proctor.example.org/ui", "a b", "", ":8700", "x:y"]
)
def test_an_allowed_host_that_is_not_a_host_name_is_refused_saying_what_to_give(
    entry: str,
) -> None:
    with pytest.raises(ConfigError, match="no scheme, no path"):
        parse_allowed_host(entry)


# Site: Origin and Sec-Fetch-Site --------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://attacker.test"},
        {"Origin": "http://localhost:8701"},  # another local port is another origin
        {"Origin": "http://127.0.0.1:8701"},
        {"Origin": "http://localhost:8700"},  # the same server under another name
        {"Origin": "null"},  # a sandboxed frame or a file
        {"Origin": "file://"},
        {"Origin": "http://127.0.0.1:8700.attacker.test"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # localhost:8701 and localhost:8700 are one site
        {"Origin": "http://127.0.0.1:8700", "Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_state_change_from_another_site_is_refused_and_changes_nothing(
    app: FastAPI, headers: dict[str, str]
) -> None:
    before = conversation_ids(app)
    json_headers = {"Content-Type": "application/json", "X-Proctor-Client": "ui"}
    ndjson = {"Content-Type": "application/x-ndjson", "X-Proctor-Client": "ui"}
    result_id, entity_id = first_entity(app)

    refusals = [
        send(app, "POST", "/api/intake/events", headers=ndjson | headers, content=PLANTED),
        send(app, "POST", f"/api/graph/entity/{entity_id}/remove", headers=json_headers | headers),
        send(app, "PUT", "/api/app", headers=json_headers | headers, json={"enabled": False}),
    ]

    for refused in refusals:
        assert refused.status_code == 403, refused.text
        assert "another site" in refused.json()["detail"] or "may not" in refused.json()["detail"]
    assert conversation_ids(app) == before
    assert entity_state(app, result_id, entity_id) != "removed"
    assert send(app, "GET", "/api/app").json()["enabled"] is True


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://127.0.0.1:8700", "Sec-Fetch-Site": "same-origin"},  # the UI
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {"Origin": "http://127.0.0.1:8700"},
        {},  # curl, an exporter, a hook
    ],
)
def test_a_state_change_from_the_server_s_own_page_or_a_client_without_a_browser_is_done(
    app: FastAPI, headers: dict[str, str]
) -> None:
    stored = send(
        app,
        "POST",
        "/api/intake/events",
        headers={"Content-Type": "application/x-ndjson"} | headers,
        content=PLANTED,
    )

    assert stored.status_code == 200, stored.text
    assert "pj:planted" in conversation_ids(app)


def test_the_server_s_own_origin_is_the_one_its_host_names(app: FastAPI) -> None:
    for name in ("localhost:8700", "[::1]:8700"):
        done = send(
            app,
            "PUT",
            "/api/app",
            host=name,
            headers={"Origin": f"http://{name}"},
            json={"enabled": True},
        )
        assert done.status_code == 200, (name, done.text)


def test_a_reverse_proxy_s_origin_is_accepted_when_its_name_is_allowed(database: Path) -> None:
    app = create_app(
        lambda: open_store(database), token=None, port=8700, allowed_hosts=["proctor.example.org"]
    )
    try:
        # The proxy passes Host through ...
        through = send(
            app,
            "PUT",
            "/api/app",
            host="proctor.example.org",
            headers={"Origin": "https://proctor.example.org"},
            json={"enabled": True},
        )
        # ... or rewrites it to the address it forwards to.
        rewritten = send(
            app,
            "PUT",
            "/api/app",
            headers={"Origin": "https://proctor.example.org"},
            json={"enabled": True},
        )
        foreign = send(
            app,
            "PUT",
            "/api/app",
            headers={"Origin": "https://attacker.test"},
            json={"enabled": True},
        )
    finally:
        app.state.store_holder.close()

    assert (through.status_code, rewritten.status_code, foreign.status_code) == (200, 200, 403)


def test_reads_carry_no_cors_permission_for_another_origin(app: FastAPI) -> None:
    origin = {"Origin": "http://attacker.test"}
    read = send(app, "GET", "/api/conversations", headers=origin)
    preflight = send(
        app,
        "OPTIONS",
        "/api/intake/events",
        headers=origin
        | {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x"},
    )

    assert read.status_code == 200  # the browser keeps it from the page: no CORS header
    assert not any(name.startswith("access-control-") for name in read.headers)
    assert not any(name.startswith("access-control-") for name in preflight.headers)


# Content type --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/html",
        None,  # a body without a type (fetch with a Blob body)
    ],
)
def test_a_state_change_a_page_could_send_anywhere_is_answered_415_and_stores_nothing(
    app: FastAPI, content_type: str | None
) -> None:
    before = conversation_ids(app)
    headers = {} if content_type is None else {"Content-Type": content_type}
    refused = send(app, "POST", "/api/intake/events", headers=headers, content=PLANTED)
    json_route = send(app, "PUT", "/api/app", headers=headers, content=b'{"enabled": false}')

    for answer in (refused, json_route):
        assert answer.status_code == 415, answer.text
        assert "application/json" in answer.json()["detail"]
    assert conversation_ids(app) == before
    assert send(app, "GET", "/api/app").json()["enabled"] is True


@pytest.mark.parametrize(
    "content_type", ["application/x-ndjson", "application/jsonl", "application/json"]
)
def test_jsonl_intake_takes_its_own_types(app: FastAPI, content_type: str) -> None:
    stored = send(
        app,
        "POST",
        "/api/intake/events",
        headers={"Content-Type": f"{content_type}; charset=utf-8"},
        content=PLANTED,
    )

    assert stored.status_code == 200, stored.text


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/graph/entity/{entity}/remove"),
        ("POST", "/api/graph/entity/{entity}/confirm"),
        ("DELETE", "/api/plans/no-such-plan"),
        ("POST", "/api/reviews/no-such-run/cancel"),
    ],
)
def test_a_body_less_state_change_needs_the_client_header(
    app: FastAPI, method: str, path: str
) -> None:
    result_id, entity_id = first_entity(app)
    url = path.format(entity=entity_id)

    refused = send(app, method, url)
    assert refused.status_code == 403
    assert "X-Proctor-Client" in refused.json()["detail"]
    assert entity_state(app, result_id, entity_id) != "removed"

    answered = send(app, method, url, headers={"X-Proctor-Client": "curl"})
    assert answered.status_code not in (403, 415), answered.text


def test_a_body_less_state_change_with_a_json_type_is_taken(app: FastAPI) -> None:
    result_id, entity_id = first_entity(app)

    removed = send(
        app,
        "POST",
        f"/api/graph/entity/{entity_id}/remove",
        headers={"Content-Type": "application/json"},
    )

    assert removed.status_code == 200, removed.text
    assert entity_state(app, result_id, entity_id) == "removed"


def test_a_claude_code_http_hook_is_answered(app: FastAPI) -> None:
    hook = {
        "session_id": "s1",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    # What Claude Code's HTTP hook sends: JSON, no Origin, no Sec-Fetch-Site.
    answered = send(app, "POST", "/api/gate/claude-code", json=hook)
    form = send(
        app,
        "POST",
        "/api/gate/claude-code",
        headers={"Content-Type": "application/x-www-form-urlencoded"},  # `curl -d @hook.json`
        content=b'{"hook_event_name": "PreToolUse"}',
    )

    assert answered.status_code == 200, answered.text
    assert form.status_code == 415
    assert "Content-Type: application/json" in form.json()["detail"]


def test_the_openapi_document_lists_the_guard_s_refusals(app: FastAPI) -> None:
    paths = send(app, "GET", "/openapi.json").json()["paths"]

    remove = paths["/api/graph/{object_type}/{object_ref}/remove"]["post"]["responses"]
    listing = paths["/api/conversations"]["get"]["responses"]
    assert {"403", "415", "421"} <= set(remove)
    assert "421" in listing and "403" not in listing
