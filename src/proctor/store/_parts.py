"""Repositories imported and built on first use, and the facade methods that reach them.

Opening a store imports no repository module: ``store.repos.graph`` imports
``_graph_store`` and builds its ``GraphRepository`` the first time it is read (then keeps
it), and ``store.graph(…)`` forwards to it. A process that reads conversations (``proctor
serve``'s first request, a review with nothing new) does not import the story graph's,
the reviews' or supervision's repositories, nor their records (issue 18).

``_store.py`` names the repository classes through ``deferred(name)`` at run time and
imports them for the type checker only, so its facade lines read
``_via("graph", GraphReads.graph)`` either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import import_module
from operator import attrgetter
from types import MethodType
from typing import TYPE_CHECKING, Any, Concatenate, cast

from proctor.store._base import Database, P, R

_BUILDING = threading.RLock()
"""Held while a part is built: a repository may hold state (an import's leases), so two
threads asking for ``repos.imports`` at once must get the same one."""

REPOSITORY_MODULES = {
    "ConversationReads": "_conversation_store",
    "ConversationRepository": "_conversation_store",
    "ImportRepository": "_import_store",
    "TraceReads": "_trace_store",
    "FindingReads": "_inbox_store",
    "FindingRepository": "_inbox_store",
    "NotificationReads": "_notifications",
    "NotificationRepository": "_notifications",
    "MemoryReads": "_memory_store",
    "MemoryRepository": "_memory_store",
    "ReviewReads": "_review_reads",
    "ReviewStore": "_review_store",
    "GraphReads": "_graph_store",
    "GraphRepository": "_graph_store",
    "GraphAccessReads": "_graph_access",
    "GraphAccessRepository": "_graph_access",
    "HeartbeatReads": "_heartbeat_store",
    "HeartbeatRepository": "_heartbeat_store",
    "SuggestionReads": "_suggestion_store",
    "SuggestionRepository": "_suggestion_store",
    "SupervisionReads": "_supervision_store",
    "SupervisionRepository": "_supervision_store",
    "GoalReads": "_goal_store",
    "GoalRepository": "_goal_store",
    "ModelSettingsReads": "_model_settings",
    "ModelSettingsRepository": "_model_settings",
    "SearchIndexReads": "_search_index",
    "SearchIndexRepository": "_search_index",
}
"""Each repository class and the module of this package that defines it."""


def repository_class(name: str) -> type[Any]:
    """The repository class ``name``, its module imported now if it was not yet."""
    module = import_module(f"proctor.store.{REPOSITORY_MODULES[name]}")
    return cast(type[Any], getattr(module, name))


class Deferred:
    """A repository class by name: ``Deferred("GraphReads").graph`` names its method
    ``graph`` without importing the module."""

    def __init__(self, name: str) -> None:
        if name not in REPOSITORY_MODULES:
            raise KeyError(f"{name} is not a repository class of proctor.store")
        self.__name__ = name

    def resolve(self) -> type[Any]:
        """The class itself (its module imported now)."""
        return repository_class(self.__name__)

    def __getattr__(self, method: str) -> DeferredMethod:
        if method.startswith("__"):
            raise AttributeError(method)
        return DeferredMethod(self, method)


class DeferredMethod:
    """A method of a ``Deferred`` class: its name now, its docstring when asked."""

    def __init__(self, owner: Deferred, name: str) -> None:
        self.owner = owner
        self.__name__ = name

    def resolve(self) -> Callable[..., Any]:
        """The method itself (its module imported now)."""
        method: Callable[..., Any] = getattr(self.owner.resolve(), self.__name__)
        return method


def deferred(name: str) -> Any:
    """The repository class ``name`` for a facade's class body, imported on first use
    (``_store.py`` imports the real class for the type checker instead)."""
    return Deferred(name)


class Forward:
    # A facade method: ``store.<name>(…)`` calls ``store.<forwarded_to>.<name>(…)``. A
    # descriptor (bound like a function) so that its docstring — the repository method's —
    # is read from the repository's module only when asked (help(), an IDE at run time).
    __slots__ = ("__name__", "_held", "_method", "forwarded_to")

    def __init__(self, target: str, method: Callable[..., Any] | DeferredMethod) -> None:
        self.__name__ = method.__name__
        self.forwarded_to = target
        self._held = attrgetter(target)
        self._method = method

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return self if instance is None else MethodType(self, instance)

    def __call__(self, store: object, /, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._held(store), self.__name__)(*args, **kwargs)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        method = self._method
        if isinstance(method, DeferredMethod):
            method = method.resolve()
        doc: str | None = method.__doc__
        return doc

    def __repr__(self) -> str:
        return f"<store method {self.__name__} → {self.forwarded_to}.{self.__name__}>"


def forward_to(
    target: str, method: Callable[Concatenate[Any, P], R]
) -> Callable[Concatenate[Any, P], R]:
    """A facade method that calls ``method`` on ``self.<target>`` (e.g. ``repos.graph``),
    whose class need not be imported yet (``deferred``)."""
    return cast(Callable[Concatenate[Any, P], R], Forward(target, method))


class Parts:
    """The base of ``Repositories``/``ReadRepositories`` (dataclasses whose fields are
    repositories, declared by class name): a field is built on first access and kept."""

    _database: Database

    def __init__(self, database: Database) -> None:
        object.__setattr__(self, "_database", database)

    if not TYPE_CHECKING:  # the type checker sees the declared fields only

        def __getattr__(self, name: str) -> Any:  # type: ignore[unreachable]
            # Called only for a field not built yet: once built it is an instance attribute.
            declared = self.__dataclass_fields__.get(name)
            if declared is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            with _BUILDING:  # one instance per part, even when threads ask at once
                part = vars(self).get(name)
                if part is None:
                    part = repository_class(declared.type)(self._database)
                    object.__setattr__(self, name, part)
            return part
