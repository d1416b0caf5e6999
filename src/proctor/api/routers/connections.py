"""Model connections (secrets never returned), the supervisor's model and the pool limits.

Connections name the environment variable that holds their key; the API says which
variable and whether it is set here, never its value (SPEC MOD-1…MOD-4).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from proctor.api._connection_models import ConnectionList, ConnectionView, SupervisorPin
from proctor.api._deps import StoreDep
from proctor.errors import ConfigError, NotFoundError
from proctor.models import PoolLimits, SupervisorChoice, pin_supervisor, pool_limits
from proctor.models import supervisor_choice as current_choice
from proctor.store import SqlStore

router = APIRouter(tags=["models"])

ConnectionName = Annotated[
    str, Path(min_length=1, max_length=80, description="The connection's name.")
]


def _views(store: SqlStore) -> tuple[SupervisorChoice, list[ConnectionView]]:
    choice = current_choice(store)
    supervisor = choice.connection or choice.pinned
    views = [
        ConnectionView.of(c, default=choice.default, supervisor=supervisor)
        for c in store.list_connections()
    ]
    return choice, views


@router.get("/connections")
def list_connections(store: StoreDep) -> ConnectionList:
    """Every model connection (no secrets), the default and the supervisor's choice."""
    choice, views = _views(store)
    return ConnectionList(default=choice.default, supervisor=choice, connections=views)


@router.get("/connections/{name}")
def show_connection(store: StoreDep, name: ConnectionName) -> ConnectionView:
    """One model connection (no secrets)."""
    _, views = _views(store)
    for view in views:
        if view.name == name:
            return view
    raise NotFoundError(f"there is no model connection named {name!r}; GET /api/connections")


@router.get("/supervisor/model")
def supervisor_model(store: StoreDep) -> SupervisorChoice:
    """The supervisor's connection setting and what it resolves to now."""
    return current_choice(store)


@router.put("/supervisor/model")
def pin_supervisor_model(store: StoreDep, body: SupervisorPin) -> SupervisorChoice:
    """Pin the supervisor to a text connection, or make it follow the default (null).

    A pinned connection never falls back to another: when it cannot serve, supervision
    fails and says so.
    """
    if body.connection is not None:
        connection = store.connection(body.connection)
        if connection is None:
            raise NotFoundError(
                f"there is no model connection named {body.connection!r}; GET /api/connections"
            )
        if connection.kind != "text":
            raise ConfigError(
                f"{body.connection!r} is an {connection.kind} model; "
                "the supervisor needs a text model"
            )
    pin_supervisor(store, body.connection)
    return current_choice(store)


@router.get("/model-pool")
def model_pool(store: StoreDep) -> PoolLimits:
    """The model pool's limits a run starting now freezes: concurrency, stage timeout,
    response capacity."""
    return pool_limits(store)
