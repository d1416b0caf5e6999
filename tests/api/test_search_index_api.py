"""``GET /api/search`` keeps its index current while ``proctor serve`` runs (issue 16).

A real server process (its lifespan starts and stops the background indexer): messages
stored after it started are found, every answer says whether the index is stale, and
``GET /api/search/index`` shows the indexer's progress. The in-process transport runs no
lifespan and so no indexer: its answers say the index is stale.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from proctor.search import index_status
from proctor.store import SqlStore, open_store
from tests.api.conftest import Api
from tests.backends import server_env
from tests.loopback import free_port
from tests.search.helpers import dialogue, write
from tests.server_zygote import forked_serving


def _serve(database: Path, *options: str) -> tuple[list[str], dict[str, str], int]:
    port = free_port()
    env = {
        "PROCTOR_HOME": str(database.parent),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        "PATH": "",
        **server_env(database.parent),
    }
    serve = ["serve", "--port", str(port)]
    return [*serve, "--no-heartbeat", *options], env, port


@pytest.fixture
def server(database: Path) -> Iterator[httpx.Client]:
    command, env, port = _serve(database, "--no-index")
    with (
        forked_serving(command, env, port),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        yield client


def _search(client: httpx.Client, q: str, **params: Any) -> dict[str, Any]:
    response = client.get("/api/search", params={"q": q, "limit": 20, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _messages(body: dict[str, Any]) -> list[str]:
    return [hit["doc_id"] for hit in body["hits"] if hit["doc_type"] == "message"]


@pytest.mark.slow  # a Proctor server
def test_search_finds_messages_stored_after_the_server_started(
    server: httpx.Client, database: Path
) -> None:
    existing = _search(server, "rounding invoice totals")
    assert _messages(existing), "the examples' messages are indexed without a manual step"
    assert existing["index"]["full_text_current"] is True
    store = open_store(database)
    try:
        write(store, dialogue("late-1", [("Dev", "The zebrafinch migration is ready.")]))
        found = _search(server, "zebrafinch migration")
        write(store, dialogue("late-2", [("Ops", "Zebrafinch deployed at noon.")]))
        later = _search(server, "zebrafinch deployed")
    finally:
        store.close()
    assert _messages(found)[0] == "late-1:t0"
    assert _messages(later)[0] == "late-2:t0"
    for body in (existing, found, later):
        index = body["index"]
        assert index["full_text_current"] is True
        assert index["stale"] == (index["note"] is not None)
        assert index["documents"] > 0
    progress = server.get("/api/search/index").json()
    assert progress["indexer"]["phase"] in {"full_text", "embedding", "idle"}
    assert progress["indexer"]["passes"] >= 1
    assert progress["indexer"]["error"] is None
    assert progress["index"]["documents"] >= later["index"]["documents"]


def test_without_a_running_indexer_the_answer_says_the_index_is_stale(api: Api) -> None:
    body = api.get("/api/search", params={"q": "rounding"}).json()
    index = body["index"]
    assert index["stale"] is True and index["full_text_current"] is False
    assert "not searchable yet" in index["note"]
    assert index["indexing"] is False
    report = api.get("/api/search/index").json()
    assert report["indexer"] is None
    assert report["index"]["stale"] is True


def _searchable(store: SqlStore, database: Path, deadline: float) -> bool:
    """Whether the full text catches up with everything stored before ``deadline``."""
    while time.monotonic() < deadline:
        if index_status(store, encoder=None).full_text_current:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow  # a Proctor server
def test_the_server_indexes_what_others_store_without_waiting_for_a_search(
    database: Path,
) -> None:
    store = open_store(database)
    try:
        assert not index_status(store, encoder=None).full_text_current
        command, env, port = _serve(database, "--index")  # the default outside tests
        with forked_serving(command, env, port):
            assert _searchable(store, database, time.monotonic() + 60), (
                "the examples were indexed with no search asked"
            )
            write(store, dialogue("late-3", [("Dev", "The quokka ledger closes Friday.")]))
            assert not index_status(store, encoder=None).full_text_current
            assert _searchable(store, database, time.monotonic() + 60), (
                "a message another process stored was indexed with no search asked"
            )
    finally:
        store.close()


@pytest.mark.slow  # a Proctor server
def test_with_no_index_the_server_indexes_nothing_until_asked(database: Path) -> None:
    store = open_store(database)
    try:
        command, env, port = _serve(database, "--no-index")
        with forked_serving(command, env, port):
            write(store, dialogue("late-4", [("Dev", "Nothing asks for this yet.")]))
            assert not _searchable(store, database, time.monotonic() + 2)
    finally:
        store.close()


def test_a_served_apps_searches_rank_from_the_in_memory_index_and_a_bare_app_does_not(
    database: Path,
) -> None:
    """A served app (its lifespan runs the background indexer) keeps an in-memory copy of
    the index for its searches (``hold_vectors``); an app called without its lifespan
    queries the vectors in the database."""
    from fastapi.testclient import TestClient

    from proctor.api import create_app
    from proctor.search._catalog import holds_vectors

    bare = Api(database)
    try:
        assert bare.get("/api/search", params={"q": "invoice"}).status_code == 200
        assert not holds_vectors(bare.app.state.store_holder.reader())
    finally:
        bare.close()
    app = create_app(lambda: open_store(database), token=None)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/api/search", params={"q": "invoice"}).status_code == 200
        assert holds_vectors(app.state.store_holder.reader())
