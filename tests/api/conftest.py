"""A store with the bundled examples ingested, checked and reviewed; an in-process client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import anyio
import httpx
import pytest

from proctor.api import create_app
from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import open_store
from proctor.supervision import check_conversations
from tests.backends import copy_database
from tests.conftest import EXAMPLES_DIR

T = TypeVar("T")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each operation schemathesis parametrizes (tests/api/test_openapi_conformance.py) gets
    its own node id, its label in brackets as its name has it. Under pytest 9 they all had
    the test function's id, and pytest-xdist, which schedules by node id, ran the first one
    81 times or, whole files to a worker (``make test``, ``make check``), once: one
    operation of 81 was checked."""
    for item in items:
        label = getattr(item, "operation_label", None)
        if isinstance(label, str) and item.id.params is None:
            item._id = item.id.with_params(label)  # pytest 9 keeps a node's id here


@pytest.fixture(scope="session")
def prepared_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples ingested, the rules run, the app enabled and a structural review published.

    Made once per test process (each pytest-xdist worker), not per module: nothing writes
    to it (``database`` and the suites' servers take copies), and building it took about a
    second of CPU and two of wall for each of the thirty-odd modules that use it, in each pass.
    """
    path = tmp_path_factory.mktemp("api") / "proctor.db"
    store = open_store(path)
    try:
        ingest(store, [EXAMPLES_DIR])
        rows = store.list_conversations(include_children=True)
        check_conversations(
            store,
            [r.conversation_id for r in rows if r.conversation.parent_conversation_id is None],
        )
        store.set_setting("app.enabled", True)
        start_review(store, ReviewRequest(), semantic=None)
    finally:
        store.close()
    return path


@pytest.fixture
def database(prepared_database: Path, proctor_home: Path) -> Path:
    """A private copy of the prepared database: tests that write do not see each other."""
    copy = proctor_home / "proctor.db"
    copy_database(prepared_database, copy, unchanging=True)
    return copy


class Api:
    """Calls the app in process through httpx's ASGI transport, as a client that is not a
    browser: at ``http://127.0.0.1``, naming itself in ``X-Proctor-Client`` as the web UI
    does (body-less state changes need it; tests/api/test_request_guard.py tests without)."""

    def __init__(self, database: Path, token: str | None = None) -> None:
        self.app = create_app(lambda: open_store(database), token=token)

    def call(
        self, method: str, url: str, *, headers: dict[str, str] | None = None, **kwargs: object
    ) -> httpx.Response:
        """One request, answered by the app."""

        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(
                transport=transport,
                base_url="http://127.0.0.1",
                headers={"X-Proctor-Client": "tests"},
            ) as client:
                return await client.request(method, url, headers=headers, **kwargs)  # type: ignore[arg-type]

        return run(send)

    def get(self, url: str, **kwargs: object) -> httpx.Response:
        """GET ``url``."""
        return self.call("GET", url, **kwargs)  # type: ignore[arg-type]

    def post(self, url: str, **kwargs: object) -> httpx.Response:
        """POST ``url``."""
        return self.call("POST", url, **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the app's store."""
        self.app.state.store_holder.close()


def run(call: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine function to completion, on a thread of its own: another library's
    event loop (Playwright's sync API keeps one) may be running on this one."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(anyio.run, call).result()


@pytest.fixture
def api(database: Path) -> Iterator[Api]:
    client = Api(database)
    try:
        yield client
    finally:
        client.close()
