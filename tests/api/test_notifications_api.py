"""Notifications over HTTP on a real ``proctor serve`` on loopback, with a bearer token:
the page with its counts, ETag and 304, marking read, and the event stream (SPEC SUP-8).
Marking read is asked of the app in process (with the token too): a server of its own to
write to cost about a second of CPU and one to three of wall; the stream keeps a real one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import Api
from tests.backends import copy_database
from tests.ui.private_server import Served, serve_home

TOKEN = "notifications-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "X-Proctor-Client": "tests"}


@pytest.fixture(scope="module")
def shared(prepared_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the tests that only read."""
    yield from _serve(prepared_database, tmp_path_factory.mktemp("notifications-read"))


@pytest.fixture
def own(prepared_database: Path, tmp_path: Path) -> Iterator[Served]:
    """A server of its own for a test that marks notifications read."""
    yield from _serve(prepared_database, tmp_path / "home")


def _serve(seed: Path, home: Path) -> Iterator[Served]:
    copy_database(seed, home / "proctor.db")
    with serve_home(home, {"PROCTOR_API_TOKEN": TOKEN}) as served:
        yield served


class _Authorized(Api):
    """The app in process, every request with the bearer token (and as a non-browser client)."""

    def call(
        self, method: str, url: str, *, headers: dict[str, str] | None = None, **kwargs: object
    ) -> httpx.Response:
        return super().call(method, url, headers={**AUTH, **(headers or {})}, **kwargs)


def _client(served: Served) -> httpx.Client:
    return httpx.Client(base_url=served.url, headers=AUTH, timeout=20)


def _page(client: httpx.Client | Api, **params: Any) -> dict[str, Any]:
    answer = client.get("/api/notifications", params=params)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


def test_the_page_lists_notifications_newest_first_with_links_to_their_findings(
    shared: Served,
) -> None:
    with _client(shared) as client:
        data = _page(client, limit=100)
        assert data["total"] == len(data["items"]) == data["unread"] > 0
        times = [item["created_at"] for item in data["items"]]
        assert times == sorted(times, reverse=True)
        for item in data["items"]:
            assert item["unread"] is True
            assert item["link"].startswith("#/conversations/")
            assert item["link"].endswith(f"?finding={item['finding_id']}")
            finding = client.get(f"/api/findings/{item['finding_id']}").json()
            assert (finding["title"], finding["key"]) == (item["title"], item["id"])


def test_pages_carry_the_total_and_cover_every_notification_once(shared: Served) -> None:
    with _client(shared) as client:
        total = _page(client)["total"]
        seen = [
            item["id"]
            for offset in range(0, total, 2)
            for item in _page(client, limit=2, offset=offset)["items"]
        ]
    assert len(seen) == len(set(seen)) == total


def test_an_unchanged_page_is_answered_304_without_a_body(shared: Served) -> None:
    with _client(shared) as client:
        first = client.get("/api/notifications")
        etag = first.headers["ETag"]
        again = client.get("/api/notifications", headers={"If-None-Match": etag})
        assert (again.status_code, again.content, again.headers["ETag"]) == (304, b"", etag)
        # Another query is another page: its own ETag.
        other = client.get("/api/notifications?unread=true", headers={"If-None-Match": etag})
        assert other.status_code == 200
        assert other.headers["ETag"] != etag


def test_without_the_token_nothing_is_listed(shared: Served) -> None:
    answer = httpx.get(f"{shared.url}/api/notifications", timeout=20)
    assert answer.status_code == 401


@pytest.mark.parametrize(
    "body",
    [{}, {"ids": [], "all": False}, {"ids": ["abc"], "all": True}, {"ids": [""]}],
    ids=["nothing", "empty", "both", "empty-id"],
)
def test_a_mark_read_that_names_nothing_clearly_is_refused(shared: Served, body: object) -> None:
    with _client(shared) as client:
        before = _page(client)["unread"]
        answer = client.post("/api/notifications/read", json=body)
        assert answer.status_code == 422
        assert _page(client)["unread"] == before


def test_marking_read_changes_the_etag_and_the_unread_count(database: Path) -> None:
    client = _Authorized(database, token=TOKEN)
    try:
        assert client.get("/api/notifications", headers={"Authorization": ""}).status_code == 401
        first = client.get("/api/notifications")
        etag = first.headers["ETag"]
        one, *rest = first.json()["items"]
        marked = client.post("/api/notifications/read", json={"ids": [one["id"][:10]]})
        assert marked.status_code == 200, marked.text
        assert marked.json() == {"marked": [one["id"]], "unread": len(rest)}
        changed = client.get("/api/notifications", headers={"If-None-Match": etag})
        assert changed.status_code == 200
        assert changed.headers["ETag"] != etag
        assert changed.json()["unread"] == len(rest)
        unread = _page(client, unread="true")
        assert one["id"] not in {item["id"] for item in unread["items"]}
        unknown = client.post("/api/notifications/read", json={"ids": ["zzzz"]})
        assert unknown.status_code == 404
        assert "zzzz" in unknown.json()["detail"]
        everything = client.post("/api/notifications/read", json={"all": True})
        assert sorted(everything.json()["marked"]) == sorted(item["id"] for item in rest)
        assert _page(client)["unread"] == 0
    finally:
        client.close()


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The data of each ``notifications`` event of a server-sent events stream."""
    name = None
    for line in lines:
        if line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:") and name == "notifications":
            yield json.loads(line.removeprefix("data:"))


@pytest.mark.slow
def test_the_stream_announces_the_counts_and_then_each_change(own: Served) -> None:
    with (
        _client(own) as client,
        client.stream("GET", "/api/notifications/stream", params={"max_seconds": 60}) as stream,
    ):
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = _events(stream.iter_lines())
        opening = next(events)
        assert opening["unread"] == opening["total"] > 0
        assert opening["newest"]["link"].endswith(opening["newest"]["finding_id"])
        with _client(own) as other:
            assert other.post("/api/notifications/read", json={"all": True}).status_code == 200
        changed = next(events)
        assert (changed["unread"], changed["total"]) == (0, opening["total"])
