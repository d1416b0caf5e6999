"""The API's routers, each imported (and its routes built) when a request first needs it.

Building a route is most of what a router module costs: FastAPI makes a pydantic type
adapter for every parameter and response as the decorator runs. A server answers its first
request without the routers nobody has asked for yet (issue 18: start < 1 s): the app
includes a ``DeferredRouter`` where it included the router, in the same place, so the
order of the routes (what matches first, the OpenAPI document) is unchanged. Its module is
imported when a request's path falls under one of the paths it declares, or when anything
reads its routes (the OpenAPI document, ``app.routes``, a request no route matched).
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.routing import BaseRoute, Match

from proctor._util.collector import freeze_what_lives

if TYPE_CHECKING:
    from starlette.types import Scope


class DeferredRouter(APIRouter):
    """Stands in for ``router`` of module ``module`` until it is needed, then forwards to it.

    ``paths`` are the path prefixes (as the app serves them, e.g. ``/api/conversations``)
    under which every route of that router lies: a request elsewhere is not one of its
    routes, so it is answered without importing the module. The stand-in has an
    ``APIRouter``'s defaults, which is what the app reads when including it: the routers
    deferred this way set only a prefix and tags (baked into their routes), no lifespan,
    body limit or form limits.
    """

    def __init__(self, module: str, paths: tuple[str, ...], attribute: str = "router") -> None:
        self._module = module
        self._attribute = attribute
        self.paths = paths
        self._lock = threading.Lock()
        self._router: APIRouter | None = None
        super().__init__()

    @property
    def module(self) -> str:
        """The module that defines the router."""
        return self._module

    @property
    def loaded(self) -> bool:
        """Whether the module was imported and its routes built."""
        return self._router is not None

    def load(self) -> APIRouter:
        """The router itself, its module imported now if it is not yet."""
        router = self._router
        if router is None:
            with self._lock:
                if self._router is None:
                    found = getattr(importlib.import_module(self._module), self._attribute)
                    assert isinstance(found, APIRouter), found
                    self._router = found
                    # In a server, the module and its routes live as long as the process:
                    # frozen, full collections no longer walk them.
                    freeze_what_lives()
                router = self._router
        return router

    def may_match(self, path: str) -> bool:
        """Whether one of the router's routes may match ``path`` (a request's path, its
        root path included or not): it lies under one of ``paths``."""
        return any(f"{prefix}/" in f"{path}/" for prefix in self.paths)

    # What FastAPI reads of an included router: its routes come from the real one.

    @property
    def routes(self) -> list[BaseRoute]:
        return self.load().routes

    @routes.setter
    def routes(self, routes: list[BaseRoute]) -> None:
        assert not routes, "a deferred router's routes are its module's"

    @property
    def _low_priority_routes(self) -> list[BaseRoute]:
        return self.load()._low_priority_routes

    @_low_priority_routes.setter
    def _low_priority_routes(self, routes: list[BaseRoute]) -> None:
        assert not routes, "a deferred router's routes are its module's"

    def _get_routes_version(self, seen: set[int] | None = None) -> int:
        return self.load()._get_routes_version(seen)

    def _contains_router(self, router: APIRouter, seen: set[int] | None = None) -> bool:
        # Asked when the app includes this one: a module not imported yet includes nothing
        # of the app being built.
        if self._router is None:
            return False
        return self._router._contains_router(router, seen)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if self._router is None and not self.may_match(str(scope.get("path", ""))):
            return Match.NONE, {}
        self.load()
        return super().matches(scope)
