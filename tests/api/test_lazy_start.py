"""``proctor serve`` starts without importing what no request has needed yet.

Each check lists which of Proctor's heavy packages a piece of code left in a new
interpreter's ``sys.modules``: the review pipeline, the job queue, the heartbeat (plans and
suggestions), webhook delivery (and httpx) are imported by the route or the background
pass that first uses them, not while the server starts (issue 18: start < 1 s); webhook
delivery starts a moment after the server, on its own thread.

The pieces of code run one after another in one interpreter (``PLAIN_CHAIN``, and
``STORE_CHAIN`` with a store), each listing ``sys.modules`` when it is done: a piece finds
there everything the pieces before it imported too, so each check (nothing watched is
imported; for one request, only its router) is as strict as in an interpreter of its own,
or stricter. An interpreter per piece cost ten interpreters, about 15 CPU seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.api._app import DeferredStart
from proctor.api._heartbeat import HeartbeatLoop
from proctor.heartbeat import worker_owner
from proctor.store import SqlStore
from tests import store_use

DEFERRED = ("proctor.review", "proctor.jobs", "proctor.heartbeat", "proctor.notify", "httpx")
"""Packages a server imports on first use only."""


@dataclass(frozen=True)
class _Piece:
    """What one piece of a chain left behind."""

    modules: frozenset[str]
    """``sys.modules`` once it ran (with what the pieces before it imported)."""
    error: str | None
    """Its traceback, when it raised."""


_RUN_CHAIN = """
import json, sys, traceback
namespace = {"__name__": "__main__"}
pieces = []
for code in json.loads(sys.stdin.read()):
    try:
        exec(compile(code, "<piece>", "exec"), namespace)
        error = None
    except BaseException:
        error = traceback.format_exc()
    pieces.append({"modules": sorted(sys.modules), "error": error})
print(json.dumps(pieces))
"""


def _run_chain(chain: tuple[str, ...], env: dict[str, str] | None = None) -> dict[str, _Piece]:
    """Each piece of ``chain`` run in turn in one new interpreter, by its code."""
    completed = subprocess.run(
        [sys.executable, "-c", _RUN_CHAIN],
        input=json.dumps(chain),
        capture_output=True,
        text=True,
        check=True,
        timeout=240,
        env=env,
    )
    pieces = json.loads(completed.stdout.strip().splitlines()[-1])
    return {
        code: _Piece(frozenset(piece["modules"]), piece["error"])
        for code, piece in zip(chain, pieces, strict=True)
    }


_chains: dict[str, dict[str, _Piece]] = {}
"""Each chain's pieces, run by the first test that needs them."""


def _after(code: str, watched: tuple[str, ...]) -> list[str]:
    """The ``watched`` modules present after ``code`` (a piece of ``PLAIN_CHAIN``) ran."""
    if "plain" not in _chains:
        _chains["plain"] = _run_chain(PLAIN_CHAIN)
    piece = _chains["plain"][code]
    assert piece.error is None, piece.error
    return [m for m in watched if m in piece.modules]


def _imported_after(code: str, watched: tuple[str, ...] = DEFERRED) -> list[str]:
    """The ``watched`` modules present after ``code`` ran (see the module's docstring)."""
    return _after(code, watched)


IMPORT_THE_API = "import proctor.api"
IMPORT_SERVE = "import proctor.cli.main, proctor.cli.serve"


@pytest.mark.slow
def test_importing_the_api_package_loads_no_review_jobs_heartbeat_or_webhook_code() -> None:
    assert _imported_after(IMPORT_THE_API) == []


def test_the_serve_command_module_loads_no_review_jobs_heartbeat_or_webhook_code() -> None:
    assert _imported_after(IMPORT_SERVE) == []


BUILD = "from proctor.api import create_app\nfrom proctor.store import open_store\n"
PLAIN_APP = BUILD + "create_app(open_store, token=None)"
WEBHOOKS_APP = BUILD + "create_app(open_store, token=None, deliver_webhooks=True)"


@pytest.mark.parametrize(
    "code", [PLAIN_APP, WEBHOOKS_APP], ids=["without-webhooks", "with-webhooks"]
)
@pytest.mark.slow
def test_building_the_app_imports_no_webhook_delivery_even_when_it_delivers_webhooks(
    code: str,
) -> None:
    assert _imported_after(code, ("proctor.notify", "httpx")) == []


def test_building_the_app_imports_no_source_adapter() -> None:
    watched = ("proctor.ingest._ingest", "proctor.ingest._intake", "proctor.sources.claude_code")
    assert _imported_after(PLAIN_APP, watched) == []


SERVE_APP = (
    "from proctor.api import create_app\nfrom proctor.store import open_store\n"
    "app = create_app(open_store, token=None, heartbeat_interval=30.0, index_search=True,"
    " deliver_webhooks=True)\n"
)
"""The app as ``proctor serve`` builds it (heartbeat loop, background indexer, webhooks)."""

NOT_AT_START = (
    "proctor.rules",
    "proctor.supervisor",
    "proctor.supervision._check",
    "proctor.gate._history",
    "proctor.jobs",
    "proctor.discussion._ask",
    "proctor.heartbeat.suggestions",
    "jsonschema",
    "onnxruntime",
    "numpy",
    "sqlalchemy.dialects.postgresql",
    "alembic",
)
"""What the routes import on first use, not while the app is built: the rules and the model
supervisor (sessions, goals, gate, intake, discussion), the job queue, suggestions' phrasing
(jsonschema), the search encoder's runtime, PostgreSQL's dialect and the migrations."""


@pytest.mark.slow
def test_building_the_app_as_serve_does_imports_no_rules_supervisor_jobs_or_encoder() -> None:
    assert _imported_after(SERVE_APP, NOT_AT_START) == []


ALL_ROUTES = SERVE_APP + (
    "from proctor.api._base_models import WireModel\n"
    "def _all(cls):\n"
    "    for sub in cls.__subclasses__():\n"
    "        yield sub\n"
    "        yield from _all(sub)\n"
    "for route in app.routes:\n"  # imports every router: their routes are built now
    "    getattr(route, 'original_router', app.router).routes\n"
    "models = list(_all(WireModel))\n"
    "assert len(models) > 50, len(models)\n"
    "built = [m.__qualname__ for m in models if m.__pydantic_complete__]\n"
    "assert built == [], built\n"
    "schema = app.openapi()\n"  # building the document builds them: nothing is missing
    "assert 'ConversationRow' in schema['components']['schemas']\n"
)
"""``SERVE_APP``, then every router's routes and the OpenAPI document."""


@pytest.mark.slow
def test_building_the_app_builds_no_response_model_until_a_request_needs_it() -> None:
    """The API's wire models (``WireModel``) build their validators and serializers on first
    use, so the app's start does not pay for the routes nobody has asked for yet (not even
    once every router is imported and its routes built)."""
    assert _imported_after(ALL_ROUTES, ()) == []


class _Service:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()

    def start(self) -> None:
        self.started.set()

    def stop(self) -> None:
        self.stopped.set()


def test_a_deferred_service_stopped_before_its_delay_is_never_built() -> None:
    built: list[_Service] = []

    def make() -> _Service:
        built.append(_Service())
        return built[-1]

    deferred = DeferredStart(make, delay=3600.0)
    deferred.start()
    deferred.stop()
    assert not deferred.started
    assert built == []


def test_a_deferred_service_starts_after_its_delay_and_stops_with_the_app() -> None:
    service = _Service()
    deferred = DeferredStart(lambda: service, delay=0.0)
    deferred.start()
    assert service.started.wait(30)
    assert deferred.started
    deferred.stop()
    assert service.stopped.is_set()


def _no_store() -> SqlStore:
    raise AssertionError("a loop that is not started opens no store")


def test_the_heartbeat_loop_leases_plans_as_this_process_like_proctor_worker() -> None:
    assert HeartbeatLoop(_no_store, 30.0).state.owner == worker_owner()


def test_a_heartbeat_loop_stopped_right_after_it_started_opened_no_store() -> None:
    loop = HeartbeatLoop(_no_store, 30.0)
    loop.start()
    loop.stop()
    assert loop.state.ticks == 0
    assert loop.state.last_error is None


def test_the_start_indexer_waits_its_moment_but_a_search_before_it_starts_it_at_once(
    tmp_path: Path,
) -> None:
    """``proctor serve`` (``index_search``) leaves the first requests the interpreter: the
    background indexer (the encoder's runtime, numpy, a first pass) starts a moment after
    the server, or at once when a search asks for it first."""
    import asyncio

    import httpx

    from proctor.api import create_app
    from proctor.store import open_store

    app = create_app(lambda: open_store(tmp_path / "proctor.db"), token=None, index_search=True)
    app.state.search_index_delay = 3600.0

    async def serve() -> tuple[object, object, dict[str, object]]:
        async with app.router.lifespan_context(app):
            before = getattr(app.state, "search_indexer", None)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                report = (await c.get("/api/search/index")).json()
            during = getattr(app.state, "search_indexer", None)
        return before, during, report

    before, during, report = asyncio.run(serve())
    assert before is None
    assert during is not None and report["indexer"] is not None


LAZY_REPOSITORIES = (
    "proctor.store._conversation_store",
    "proctor.store._graph_store",
    "proctor.store._graph_publish",
    "proctor.store._graph_queries",
    "proctor.store._review_store",
    "proctor.store._review_reads",
    "proctor.store._heartbeat_store",
    "proctor.store._import_store",
    "proctor.store._search_index",
    "proctor.store._deletion",
)
"""Repository modules (and what only they import) that opening the store, building the app
and answering ``GET /api/conversations`` do not need: ``store.repos.<part>`` imports its
module on first use, and ``proctor.store`` resolves its names on first use."""

FIRST_CONVERSATIONS = SERVE_APP + (
    "import asyncio, httpx\n"
    "async def first():\n"
    "    transport = httpx.ASGITransport(app=app)\n"
    "    async with httpx.AsyncClient(transport=transport, base_url='http://127.0.0.1') as c:\n"
    "        answer = await c.get('/api/conversations')\n"
    "    assert answer.status_code == 200, answer.text\n"
    "    assert answer.json()['total'] == 0, answer.text\n"
    "asyncio.run(first())\n"
)
"""The app as ``proctor serve`` builds it, then its first request (the lifespan's background
work, which starts a moment later on its own threads, is not run)."""


def _imported_in(home: Path, code: str, watched: tuple[str, ...]) -> list[str]:
    """The ``watched`` modules present after ``code`` (a piece of ``STORE_CHAIN``) ran in an
    interpreter whose store is the first asking test's ``home``'s (created and migrated
    first, in this process). Every test that asks counts as reaching a store
    (``tests/store_use.py``): the PostgreSQL pass runs each of them."""
    from proctor.store import open_store
    from tests.backends import database_env

    if "store" not in _chains:
        home.mkdir(parents=True, exist_ok=True)
        env = database_env(home)
        open_store().close()
        _chains["store"] = _run_chain(STORE_CHAIN, {**os.environ, **env})
    store_use.note_store_use()
    piece = _chains["store"][code]
    assert piece.error is None, piece.error
    return [m for m in watched if m in piece.modules]


@pytest.mark.slow
def test_a_servers_first_conversation_list_imports_no_other_repository(
    proctor_home: Path,
) -> None:
    assert _imported_in(proctor_home, FIRST_CONVERSATIONS, LAZY_REPOSITORIES) == []


OPEN_A_STORE = (
    "from proctor.store import open_store\n"
    "store = open_store()\n"
    "reader = store.reader()\n"
    "assert vars(store.repos).keys() == {'_database'}, vars(store.repos)\n"
    "assert reader.get_setting('app.enabled') is None\n"
    "assert vars(reader.repos).keys() == {'_database', 'models'}, vars(reader.repos)\n"
    "store.close()\n"
)


def test_opening_a_store_imports_no_repository_until_one_is_used(proctor_home: Path) -> None:
    watched = (*LAZY_REPOSITORIES, "proctor.store._inbox_store", "proctor.store._interfaces")
    assert _imported_in(proctor_home, OPEN_A_STORE, watched) == []


ROUTERS_AFTER_THE_OVERVIEW = tuple(
    f"proctor.api.routers.{name}"
    for name in [
        "search",
        "activity",
        "conversations",
        "sources",
        "findings",
        "notifications",
        "sessions",
        "goals",
        "memories",
        "reviews",
        "graph",
        "discussion",
        "knowledge",
        "plans",
        "heartbeat",
        "app_switch",
        "suggestions",
        "connections",
        "gate",
        "intake",
    ]
)
"""Every router but the overview's (health, projects), in the app's order."""

NOT_BEFORE_A_REQUEST = (
    *ROUTERS_AFTER_THE_OVERVIEW,
    "proctor.api._models",
    "proctor.search",
    "proctor.graph.views",
    "proctor.heartbeat",
)
"""Imported by the first request that needs them: the routers, the wire models around
search and the graph's views, search itself (``SearchHit``), the heartbeat (activity)."""


def test_building_the_app_as_serve_does_imports_no_router_but_the_overview() -> None:
    assert _imported_after(SERVE_APP, NOT_BEFORE_A_REQUEST) == []


@pytest.mark.slow
def test_a_servers_first_conversation_list_imports_its_router_only(proctor_home: Path) -> None:
    """``GET /api/conversations`` imports the conversations router (the first whose paths
    hold it, and whose route matches), not search, the wire models around it, the other
    routers (the goals', also under ``/api/conversations``, comes after it) or the heartbeat.
    """
    watched = tuple(m for m in NOT_BEFORE_A_REQUEST if m != "proctor.graph.views")
    found = _imported_in(proctor_home, FIRST_CONVERSATIONS, watched)
    assert found == ["proctor.api.routers.conversations"]


def test_every_deferred_routers_routes_lie_under_the_paths_it_declares() -> None:
    """A request outside a deferred router's paths is answered without importing it: that is
    right only if none of its routes lies elsewhere. Its paths as the app serves them."""
    from fastapi.routing import APIRoute

    from proctor.api._app import deferred_routers

    routers = deferred_routers()
    assert [r.module for r in routers.values()][:-1] == list(ROUTERS_AFTER_THE_OVERVIEW)
    for name, deferred in routers.items():
        prefix = "" if name == "otlp" else "/api"
        under = "/v1" if name == "otlp" else ""
        paths = [under + r.path for r in deferred.routes if isinstance(r, APIRoute)]
        assert paths, name
        for path in paths:
            served = prefix + path
            assert deferred.may_match(served), (name, served)
            assert any(served == p or served.startswith(p + "/") for p in deferred.paths)
        assert not deferred.may_match("/api/health")
        assert not deferred.may_match("/api/projects")


def test_a_request_outside_a_deferred_routers_paths_does_not_import_it() -> None:
    from proctor.api._routers import DeferredRouter

    deferred = DeferredRouter("proctor.api.routers.knowledge", ("/api/knowledge",))
    assert deferred.may_match("/api/knowledge")
    assert deferred.may_match("/api/knowledge/entries/x")
    assert not deferred.may_match("/api/knowledgeable")
    assert not deferred.may_match("/api/findings")
    assert not deferred.loaded


@pytest.mark.slow
def test_a_first_findings_page_imports_neither_search_nor_the_graphs_wire_models(
    proctor_home: Path,
) -> None:
    """The findings router's own documents live with the inbox's (``_inbox_models``): its
    first page imports no search and none of the graph's or search's wire models."""
    watched = ("proctor.search", "proctor.api._models", "proctor.api._search_models")
    assert _imported_in(proctor_home, FIRST_FINDINGS, watched) == []


FIRST_FINDINGS = FIRST_CONVERSATIONS.replace("/api/conversations", "/api/findings").replace(
    "['total'] == 0", "['findings'] == []"
)
"""``FIRST_CONVERSATIONS`` with the findings' first page instead."""

PLAIN_CHAIN = (
    IMPORT_THE_API,
    IMPORT_SERVE,
    PLAIN_APP,
    WEBHOOKS_APP,
    SERVE_APP,
    ALL_ROUTES,
)
"""The pieces checked without a store, in the order one interpreter runs them: each sees
what the ones before imported, so the checks are as strict as apart, or stricter
(``ALL_ROUTES`` imports every router: it comes after every check of what building the app
left out)."""

STORE_CHAIN = (OPEN_A_STORE, FIRST_CONVERSATIONS, FIRST_FINDINGS)
"""The pieces checked with a store, in order (a store opened and closed, then a served app's
first conversation list, then another's first findings page)."""
