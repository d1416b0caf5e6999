"""The app factory: one store per app, Proctor's errors as JSON with a sentence."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from proctor import __version__
from proctor.api._auth import BearerTokenMiddleware
from proctor.api._base_models import WireModel
from proctor.api._deps import stop_review_runner
from proctor.api._guard import SAFE_METHODS, RequestGuard, server_hosts
from proctor.api._parameters import NulParameters
from proctor.api._quiet import RequestActivity, RequestActivityMiddleware
from proctor.api._routers import DeferredRouter
from proctor.api._ui import SecurityHeaders, mount_ui
from proctor.errors import (
    AppDisabledError,
    BusyError,
    NotFoundError,
    ProctorError,
    ReviewStateError,
    SuggestionStateError,
)

if TYPE_CHECKING:
    from proctor.store import ReadStore, SqlStore

StoreOpener = Callable[[], "SqlStore"]
"""Opens the store the app serves (called once, on the first request)."""


class StoreHolder:
    """Opens the store once, on first use, and closes it when the app stops.

    ``reader()`` is the same database read-only (the GET routes' store): it has no write
    methods and its connections are refused any write by the database.
    """

    def __init__(self, opener: StoreOpener) -> None:
        self._opener = opener
        self._store: SqlStore | None = None
        self._reader: ReadStore | None = None
        self._lock = threading.Lock()

    def get(self) -> SqlStore:
        """The app's store, opened now if it is not yet."""
        with self._lock:
            if self._store is None:
                self._store = self._opener()
            return self._store

    def reader(self) -> ReadStore:
        """The app's store read-only (through its read-only engine), opened now if need be."""
        store = self.get()
        with self._lock:
            if self._reader is None:
                self._reader = store.reader()
            return self._reader

    def close(self) -> None:
        """Release the store's connections."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
                self._reader = None


class ErrorBody(WireModel):
    """A refused request: one sentence saying what was wrong and what to do."""

    detail: str
    """The sentence."""


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "The request cannot be done as asked."},
    401: {"model": ErrorBody, "description": "The bearer token is missing or wrong."},
    404: {"model": ErrorBody, "description": "No such id."},
    409: {"model": ErrorBody, "description": "Not now: busy, disabled, or the wrong state."},
    421: {"model": ErrorBody, "description": "The Host header does not name this server."},
}
"""Documented on every operation; 422 (validation) is FastAPI's own shape."""

_STATE_CHANGE_REFUSALS = {
    "403": "Sent by another site's page, or without a body and without X-Proctor-Client.",
    "415": "The Content-Type is not JSON (JSON Lines and OTLP protobuf where the route says).",
}


def _document_state_changes(app: FastAPI) -> None:
    """Add the request guard's refusals to every operation that changes something."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()  # cached by FastAPI; adding again changes nothing
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        for operations in schema.get("paths", {}).values():
            for method, operation in operations.items():
                if method.upper() in SAFE_METHODS:
                    continue
                answers = operation.setdefault("responses", {})
                for status, description in _STATE_CHANGE_REFUSALS.items():
                    answers.setdefault(status, {"description": description, "content": error})
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _status_for(exc: ProctorError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, BusyError | ReviewStateError | AppDisabledError | SuggestionStateError):
        return 409
    return 400


async def _proctor_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProctorError)
    return JSONResponse({"detail": str(exc)}, status_code=_status_for(exc))


START_DELAY_SECONDS = 2.0
"""Background work a server hosts (the heartbeat's first pass, webhook delivery) starts this
long after the server does, so it does not compete with the first requests for the one
interpreter (it imports and opens what it needs on its own thread)."""


class _Service(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class DeferredStart:
    """Builds and starts a background service ``delay`` seconds after ``start``, on a timer
    thread (then at a quiet moment of ``activity``'s requests, when given); ``stop`` before
    then means it never starts."""

    def __init__(
        self,
        make: Callable[[], _Service],
        delay: float = START_DELAY_SECONDS,
        activity: RequestActivity | None = None,
    ) -> None:
        self._make = make
        self._delay = delay
        self._activity = activity
        self._lock = threading.Lock()
        self._stopped = False
        self._service: _Service | None = None
        self._timer = threading.Timer(delay, self._start)
        self._timer.daemon = True

    @property
    def started(self) -> bool:
        """Whether the service was built and started."""
        return self._service is not None

    def start(self) -> None:
        """Start the service after the delay."""
        self._timer.start()

    def _start(self) -> None:
        if self._activity is not None and not self._activity.wait_quiet():
            return  # the app stopped meanwhile
        with self._lock:
            if self._stopped:
                return
            self._service = self._make()
            self._service.start()

    def stop(self) -> None:
        """Stop the service if it started; never start it otherwise."""
        self._timer.cancel()
        with self._lock:
            self._stopped = True
            service = self._service
        if service is not None:
            service.stop()


def _webhook_thread(
    store: Callable[[], SqlStore], activity: RequestActivity
) -> Callable[[], _Service]:
    def quiet_store() -> SqlStore:
        # The thread asks for the store before each poll (every few seconds, a few ms of
        # Python): it polls in a quiet moment of the requests, not in the middle of one.
        activity.wait_quiet()
        return store()

    def make() -> _Service:
        from proctor.notify import WebhookThread  # and httpx: imported on the timer's thread

        return WebhookThread(quiet_store)

    return make


_ROUTERS: dict[str, tuple[str, ...]] = {
    "search": ("/search",),
    "activity": ("/activity",),
    "conversations": ("/conversations",),
    "sources": ("/sources", "/source-context"),
    "findings": ("/findings",),
    "notifications": ("/notifications",),
    "sessions": ("/sessions",),
    "goals": ("/conversations",),
    "memories": ("/findings", "/memories", "/tasks"),
    "reviews": ("/reviews",),
    "graph": ("/results", "/stories", "/graph"),
    "discussion": ("/results",),
    "knowledge": ("/knowledge",),
    "plans": ("/plans",),
    "heartbeat": ("/heartbeat",),
    "app_switch": ("/app",),
    "suggestions": ("/suggestions",),
    "connections": ("/connections", "/supervisor", "/model-pool"),
    "gate": ("/gate",),
    "intake": ("/intake",),
}
"""The routers of ``proctor.api.routers`` after the overview, in the app's order, with the
paths (under ``/api``) their routes lie under (``tests/api/test_lazy_start.py`` checks them)."""


def deferred_routers() -> dict[str, DeferredRouter]:
    """A stand-in for each router but the overview, in the app's order (``_ROUTERS``), and
    ``otlp`` for intake's OTLP/HTTP routes (``/v1/traces``, ``/v1/logs``)."""
    routers = {
        name: DeferredRouter(f"proctor.api.routers.{name}", tuple(f"/api{p}" for p in paths))
        for name, paths in _ROUTERS.items()
    }
    routers["otlp"] = DeferredRouter("proctor.api.routers.intake", ("/v1",), "otlp_router")
    return routers


def create_app(
    store_opener: StoreOpener,
    *,
    token: str | None,
    heartbeat_interval: float | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    allowed_hosts: Sequence[str] = (),
    index_search: bool = False,
    deliver_webhooks: bool = False,
) -> FastAPI:
    """The HTTP API over the store ``store_opener`` opens.

    Args:
        store_opener: opens the store; called once, on the first request that needs it.
        token: when set, every request must carry ``Authorization: Bearer TOKEN``.
        heartbeat_interval: when set, due heartbeat plans run every that many seconds
            while the app is up (``proctor serve`` hosts the worker's loop).
        host: the address the server is bound to; requests must name it (or a loopback
            name) in ``Host`` (see ``_guard``).
        port: the bound port those names must carry; ``None`` accepts any port.
        allowed_hosts: more names to answer to (``--allowed-host``: a reverse proxy's).
        index_search: start the background search indexer when the app starts, so what
            is stored (by intake, imports or reviews in other processes) becomes searchable
            without waiting for a first search; otherwise it starts on the first search.
        deliver_webhooks: while the app is up, deliver new notifications to the webhooks
            their policies name (``proctor serve``; see ``proctor.notify``).
    """
    from proctor.api._heartbeat import HeartbeatLoop
    from proctor.api.routers import overview

    holder = StoreHolder(store_opener)
    activity = RequestActivity()  # background work waits for a quiet moment (``_quiet``)
    loop = (
        None
        if heartbeat_interval is None
        else HeartbeatLoop(holder.get, heartbeat_interval, activity=activity)
    )
    webhooks = (
        DeferredStart(_webhook_thread(holder.get, activity), activity=activity)
        if deliver_webhooks
        else None
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if loop is not None:
            loop.start()
        if webhooks is not None:
            webhooks.start()
        yield
        activity.close()  # background work waiting for a quiet moment stops waiting
        if webhooks is not None:
            await anyio.to_thread.run_sync(webhooks.stop)
        if loop is not None:
            await anyio.to_thread.run_sync(loop.stop)
        # A review running in the background is paused, as Ctrl-C does in the CLI.
        await anyio.to_thread.run_sync(stop_review_runner, app)
        # Analyses queued by live intake: those running finish, the others are dropped (a
        # router not imported yet queued none).
        if deferred["intake"].loaded:
            from proctor.api.routers.intake import stop_analysis_queue

            await anyio.to_thread.run_sync(stop_analysis_queue, app)
        if deferred["sessions"].loaded:
            from proctor.api.routers.sessions import stop_manual_queue

            await anyio.to_thread.run_sync(stop_manual_queue, app)
        holder.close()

    app = FastAPI(
        title="Proctor",
        version=__version__,
        description="Conversations, findings, reviews and the story graph of a Proctor store.",
        lifespan=lifespan,
    )
    app.state.store_holder = holder
    app.state.request_activity = activity
    app.state.heartbeat = loop
    app.state.search_index_at_start = index_search
    app.add_exception_handler(ProctorError, _proctor_error)
    # The overview router (health, projects; its lifespan runs the search indexer) is
    # imported now, the others when a request first needs them (``_routers``).
    deferred = deferred_routers()
    app.include_router(overview.router, prefix="/api", responses=ERROR_RESPONSES)
    for name, router in deferred.items():
        if name != "otlp":
            app.include_router(router, prefix="/api", responses=ERROR_RESPONSES)
    # OTLP/HTTP exporters post to {OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces.
    app.include_router(deferred["otlp"], prefix="/v1", responses=ERROR_RESPONSES)
    _document_state_changes(app)
    mount_ui(app)
    app.add_middleware(NulParameters)  # innermost: after the site checks and the token
    if token:
        app.add_middleware(BearerTokenMiddleware, token=token)
    hosts = server_hosts(host, port, token=bool(token), extra=allowed_hosts)
    app.add_middleware(RequestGuard, hosts=hosts)  # outside the token: refusals need none
    app.add_middleware(SecurityHeaders)
    app.add_middleware(RequestActivityMiddleware, activity=activity)  # outermost: every request
    return app
