"""Model connections (secrets never returned), the supervisor's model and the pool limits.

Connections name the environment variable that holds their key; the API says which
variable and whether it is set here, never its value (SPEC MOD-1…MOD-4).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from proctor.api._connection_models import ConnectionList, ConnectionView, SupervisorPin
from proctor.api._deps import ReaderDep, StoreDep
from proctor.errors import ConfigError, NotFoundError
from proctor.models import (
    PoolLimits,
    SupervisorChoice,
    pin_supervisor,
    pool_limits,
    set_pool_limits,
)
from proctor.models import supervisor_choice as current_choice
from proctor.store import ReadStore

router = APIRouter(tags=["models"])

ConnectionName = Annotated[
    str, Path(min_length=1, max_length=80, description="The connection's name.")
]


def _views(store: ReadStore) -> tuple[SupervisorChoice, list[ConnectionView]]:
    choice = current_choice(store)
    supervisor = choice.connection or choice.pinned
    views = [
        ConnectionView.of(c, default=choice.default, supervisor=supervisor)
        for c in store.list_connections()
    ]
    return choice, views


@router.get("/connections")
def list_connections(store: ReaderDep) -> ConnectionList:
    """Every model connection (no secrets), the default and the supervisor's choice."""
    choice, views = _views(store)
    return ConnectionList(default=choice.default, supervisor=choice, connections=views)


@router.get("/connections/{name}")
def show_connection(store: ReaderDep, name: ConnectionName) -> ConnectionView:
    """One model connection (no secrets)."""
    _, views = _views(store)
    for view in views:
        if view.name == name:
            return view
    raise NotFoundError(f"there is no model connection named {name!r}; GET /api/connections")


@router.get("/supervisor/model")
def supervisor_model(store: ReaderDep) -> SupervisorChoice:
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
def model_pool(store: ReaderDep) -> PoolLimits:
    """The model pool's limits a run starting now freezes: concurrency, stage timeout,
    response capacity."""
    return pool_limits(store)


def _within(allowed: str) -> WrapValidator:
    """Replace pydantic's range message with one sentence a settings form can show."""

    def check(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError(
                "pool_limit",
                "must be {allowed}, not {given}",
                {"allowed": allowed, "given": repr(value)[:40]},
            ) from None

    return WrapValidator(check)


class PoolLimitsChange(BaseModel):
    """New pool limits; a field left out (or null) keeps its current value."""

    model_config = ConfigDict(extra="forbid")

    concurrency: (
        Annotated[int, Field(ge=1, le=4), _within("a whole number from 1 to 4 (calls at once)")]
        | None
    ) = None
    """Model calls in flight at once."""
    stage_timeout_s: (
        Annotated[float, Field(ge=30, le=600), _within("a number of seconds from 30 to 600")] | None
    ) = None
    """Seconds one stage (all attempts of one call) may take."""
    capacity_kib: (
        Annotated[int, Field(ge=100, le=16384), _within("a whole number of KiB from 100 to 16384")]
        | None
    ) = None
    """The largest answer accepted, in KiB; beyond it the stream is aborted."""


@router.put("/model-pool")
def change_model_pool(store: StoreDep, body: PoolLimitsChange) -> PoolLimits:
    """Change the pool limits (as ``proctor models limits``); runs already started keep the
    limits they froze, later runs use these. Stored limits that no longer validate are
    replaced: the fields left out take their defaults."""
    try:
        limits = pool_limits(store)
    except ConfigError:
        limits = PoolLimits()
    changes = body.model_dump(exclude_none=True)
    if changes:
        limits = PoolLimits(**{**asdict(limits), **changes})
        set_pool_limits(store, limits)
    return limits
