"""The app factory: one store per app, Proctor's errors as JSON with a sentence."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from proctor import __version__
from proctor.api._auth import BearerTokenMiddleware
from proctor.errors import (
    AppDisabledError,
    BusyError,
    ConfigError,
    NotFoundError,
    ProctorError,
    ReviewStateError,
)
from proctor.store import SqlStore

StoreOpener = Callable[[], SqlStore]
"""Opens the store the app serves (called once, on the first request)."""


class StoreHolder:
    """Opens the store once, on first use, and closes it when the app stops."""

    def __init__(self, opener: StoreOpener) -> None:
        self._opener = opener
        self._store: SqlStore | None = None
        self._lock = threading.Lock()

    def get(self) -> SqlStore:
        """The app's store, opened now if it is not yet."""
        with self._lock:
            if self._store is None:
                self._store = self._opener()
            return self._store

    def close(self) -> None:
        """Release the store's connections."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def _status_for(exc: ProctorError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, BusyError | ReviewStateError | AppDisabledError):
        return 409
    if isinstance(exc, ConfigError):
        return 422
    return 400


async def _proctor_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProctorError)
    return JSONResponse({"detail": str(exc)}, status_code=_status_for(exc))


def create_app(store_opener: StoreOpener, *, token: str | None) -> FastAPI:
    """The HTTP API over the store ``store_opener`` opens.

    Args:
        store_opener: opens the store; called once, on the first request that needs it.
        token: when set, every request must carry ``Authorization: Bearer TOKEN``.
    """
    from proctor.api.routers import (
        connections,
        conversations,
        discussion,
        findings,
        gate,
        graph,
        intake,
        knowledge,
        overview,
        plans,
        reviews,
        sessions,
        sources,
        suggestions,
    )

    holder = StoreHolder(store_opener)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        holder.close()

    app = FastAPI(
        title="Proctor",
        version=__version__,
        description="Conversations, findings, reviews and the story graph of a Proctor store.",
        lifespan=lifespan,
    )
    app.state.store_holder = holder
    app.add_exception_handler(ProctorError, _proctor_error)
    for module in (
        overview,
        conversations,
        sources,
        findings,
        sessions,
        reviews,
        graph,
        discussion,
        knowledge,
        plans,
        suggestions,
        connections,
        gate,
        intake,
    ):
        app.include_router(module.router, prefix="/api")
    # OTLP/HTTP exporters post to {OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces.
    app.include_router(intake.otlp_router)
    if token:
        app.add_middleware(BearerTokenMiddleware, token=token)
    return app
