"""``proctor serve`` starts without importing what no request has needed yet.

Each check runs a fresh interpreter and lists which of Proctor's heavy packages an import
left in ``sys.modules``: the review pipeline, the job queue, the heartbeat (plans and
suggestions), webhook delivery (and httpx) are imported by the route or the background
pass that first uses them, not while the server starts (issue 18: start < 1 s); webhook
delivery starts a moment after the server, on its own thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path

import pytest

from proctor.api._app import DeferredStart
from proctor.api._heartbeat import HeartbeatLoop
from proctor.heartbeat import worker_owner
from proctor.store import SqlStore

DEFERRED = ("proctor.review", "proctor.jobs", "proctor.heartbeat", "proctor.notify", "httpx")
"""Packages a server imports on first use only."""


def _imported_after(code: str, watched: tuple[str, ...] = DEFERRED) -> list[str]:
    """The ``watched`` modules present in a new interpreter after running ``code``."""
    present = _modules_after(code)
    return [m for m in watched if m in present]


@cache
def _modules_after(code: str) -> frozenset[str]:
    """Every module in ``sys.modules`` of a new interpreter after running ``code``: one
    interpreter per code, however many tests watch it for different modules (each costs
    about a second of CPU)."""
    listing = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    completed = subprocess.run(
        [sys.executable, "-c", f"{code}\n{listing}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return frozenset(json.loads(completed.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_importing_the_api_package_loads_no_review_jobs_heartbeat_or_webhook_code() -> None:
    assert _imported_after("import proctor.api") == []


def test_the_serve_command_module_loads_no_review_jobs_heartbeat_or_webhook_code() -> None:
    assert _imported_after("import proctor.cli.main, proctor.cli.serve") == []


@pytest.mark.parametrize(
    "make",
    [
        "create_app(open_store, token=None)",
        "create_app(open_store, token=None, deliver_webhooks=True)",
    ],
    ids=["without-webhooks", "with-webhooks"],
)
@pytest.mark.slow
def test_building_the_app_imports_no_webhook_delivery_even_when_it_delivers_webhooks(
    make: str,
) -> None:
    code = f"from proctor.api import create_app\nfrom proctor.store import open_store\n{make}"
    assert _imported_after(code, ("proctor.notify", "httpx")) == []


def test_building_the_app_imports_no_source_adapter() -> None:
    code = "from proctor.api import create_app\nfrom proctor.store import open_store\n"
    code += "create_app(open_store, token=None)"
    watched = ("proctor.ingest._ingest", "proctor.ingest._intake", "proctor.sources.claude_code")
    assert _imported_after(code, watched) == []


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


@pytest.mark.slow
def test_building_the_app_builds_no_response_model_until_a_request_needs_it() -> None:
    """The API's wire models (``WireModel``) build their validators and serializers on first
    use, so the app's start does not pay for the routes nobody has asked for yet (not even
    once every router is imported and its routes built)."""
    code = SERVE_APP + (
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
    assert _imported_after(code, ()) == []


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
    """The ``watched`` modules present after ``code`` ran in a new interpreter whose store is
    ``home``'s (created and migrated first, in this process)."""
    import os

    from proctor.store import open_store
    from tests.backends import database_env

    home.mkdir(parents=True, exist_ok=True)
    env = database_env(home)
    open_store().close()
    listing = (
        f"import json, sys\nprint(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", f"{code}\n{listing}"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert completed.returncode == 0, completed.stderr
    found: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.slow
def test_a_servers_first_conversation_list_imports_no_other_repository(
    proctor_home: Path,
) -> None:
    assert _imported_in(proctor_home, FIRST_CONVERSATIONS, LAZY_REPOSITORIES) == []


def test_opening_a_store_imports_no_repository_until_one_is_used(proctor_home: Path) -> None:
    code = (
        "from proctor.store import open_store\n"
        "store = open_store()\n"
        "reader = store.reader()\n"
        "assert vars(store.repos).keys() == {'_database'}, vars(store.repos)\n"
        "assert reader.get_setting('app.enabled') is None\n"
        "assert vars(reader.repos).keys() == {'_database', 'models'}, vars(reader.repos)\n"
        "store.close()\n"
    )
    watched = (*LAZY_REPOSITORIES, "proctor.store._inbox_store", "proctor.store._interfaces")
    assert _imported_in(proctor_home, code, watched) == []


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
    code = FIRST_CONVERSATIONS.replace("/api/conversations", "/api/findings").replace(
        "['total'] == 0", "['findings'] == []"
    )
    watched = ("proctor.search", "proctor.api._models", "proctor.api._search_models")
    assert _imported_in(proctor_home, code, watched) == []
