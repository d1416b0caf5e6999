"""The API's GET routes read through a read-only store: the database refuses their writes.

The app holds one writable store for the routes that change data and gives every GET route
its read-only view (``SqlStore.reader()``): no write methods, and a write statement sent
through its connection is refused by the database (SQLite ``mode=ro``, PostgreSQL read-only
transactions). Run on both backends (``PROCTOR_TEST_BACKEND=postgresql``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute
from sqlalchemy import delete, select
from sqlalchemy.exc import DBAPIError
from starlette.routing import Mount

from proctor.api._deps import ReaderDep, _reader, _store
from proctor.errors import StoreError
from proctor.store import ReadStore, SqlStore
from proctor.store import tables as t
from tests.api.conftest import Api

REFUSED = re.compile(r"readonly database|read-only transaction")
"""SQLite's ``attempt to write a readonly database``; PostgreSQL's ``cannot execute … in a
read-only transaction``."""


def _calls(dependant: Any) -> set[Any]:
    found = {dependant.call}
    for sub in dependant.dependencies:
        found |= _calls(sub)
    return found


def _routes(routes: list[Any]) -> Iterator[APIRoute]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif isinstance(route, Mount):
            yield from _routes(route.routes)
        elif hasattr(route, "original_router"):  # an included router (FastAPI ≥ 0.120)
            yield from _routes(route.original_router.routes)


def test_every_get_route_depends_on_the_read_only_store_and_none_on_the_writer(
    api: Api,
) -> None:
    routes = list(_routes(api.app.routes))
    gets = [r for r in routes if r.methods == {"GET"}]
    assert len(gets) > 40
    readers = [r.path for r in gets if _reader in _calls(r.dependant)]
    assert len(readers) > 40
    assert [r.path for r in gets if _store in _calls(r.dependant)] == []


def _delete_conversations(store: ReadStore) -> None:
    with store._read() as connection:
        connection.execute(delete(t.conversations))
        connection.commit()


def test_a_write_through_a_get_routes_store_is_refused_by_the_database(api: Api) -> None:
    seen: dict[str, Any] = {}

    @api.app.get("/api/test-probe")
    def probe(store: ReaderDep) -> dict[str, str]:
        seen["store"] = store
        try:
            _delete_conversations(store)
        except (StoreError, DBAPIError) as exc:
            return {"refused": str(exc)}
        return {"refused": ""}

    response = api.get("/api/test-probe")
    assert response.status_code == 200
    assert REFUSED.search(response.json()["refused"]), response.json()
    assert isinstance(seen["store"], ReadStore) and not isinstance(seen["store"], SqlStore)
    assert not hasattr(seen["store"], "write_conversation")
    total = api.get("/api/conversations", params={"include_children": True}).json()["total"]
    assert total > 2


def test_a_real_get_route_that_tried_to_write_would_be_refused(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GET /api/projects`` with its store's read made to write first: the write fails."""
    refusals: list[str] = []
    projects = ReadStore.projects

    def writing_projects(self: ReadStore) -> Any:
        try:
            _delete_conversations(self)
        except (StoreError, DBAPIError) as exc:
            refusals.append(str(exc))
            raise
        return projects(self)

    monkeypatch.setattr(ReadStore, "projects", writing_projects)
    try:
        status = api.get("/api/projects").status_code
    except (StoreError, DBAPIError):  # raised through the in-process transport
        status = 500
    assert status >= 400
    assert len(refusals) == 1 and REFUSED.search(refusals[0]), refusals
    monkeypatch.undo()
    holder = api.app.state.store_holder
    with holder.get()._read() as connection:
        assert connection.execute(select(t.conversations.c.conversation_id)).first() is not None
    assert api.get("/api/projects").status_code == 200
