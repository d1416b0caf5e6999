"""Live supervision sessions: list, show, enable, disable (SUP-1, SUP-2, SUP-9).

A target is a conversation id or unique prefix, or ``task:<id>``. Supervision is off by
default; enabling starts no analysis by itself (events already stored count as seen).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._session_models import SessionPage, SessionSettingsBody
from proctor.errors import ModelError, NotFoundError
from proctor.store import SqlStore
from proctor.supervision import (
    SessionSettings,
    SessionStatus,
    SystemClock,
    disable_supervision,
    enable_supervision,
    resolve_target,
    session_status,
)

router = APIRouter(prefix="/sessions", tags=["supervision"])

TargetRef = Annotated[
    str,
    Path(
        min_length=1,
        max_length=300,
        description="A conversation id or unique prefix, or task:<id>.",
    ),
]


def _connection(store: SqlStore) -> tuple[str | None, str | None]:
    from proctor.models import resolve_supervisor_connection

    try:
        connection = resolve_supervisor_connection(store)
    except ModelError as exc:
        return None, str(exc)
    return f"{connection.name} ({connection.provider}, {connection.model})", None


@router.get("")
def list_sessions(
    store: StoreDep,
    enabled_only: Annotated[bool, Query(description="Only enabled sessions.")] = False,
    limit: Limit = 20,
    offset: Offset = 0,
) -> SessionPage:
    """Supervised targets (enabled and disabled) with state, budget use and last run."""
    now = SystemClock().now()
    sessions = store.supervision_sessions(enabled_only=enabled_only)
    page = [session_status(store, s, now=now) for s in sessions[offset : offset + limit]]
    connection, problem = _connection(store)
    return SessionPage(
        limit=limit,
        offset=offset,
        total=len(sessions),
        sessions=page,
        connection=connection,
        connection_error=problem,
    )


@router.get("/{target}")
def show_session(store: StoreDep, target: TargetRef) -> SessionStatus:
    """One target's session: state, usage this period, last run, pending analysis."""
    resolved = resolve_target(store, target)
    session = store.supervision_session(resolved.target_id)
    if session is None:
        raise NotFoundError(
            f"{resolved.label} is not supervised (supervision is off by default); "
            "POST /api/sessions/{target}/enable starts it"
        )
    return session_status(store, session, now=SystemClock().now())


@router.post("/{target}/enable")
def enable(store: StoreDep, target: TargetRef, body: SessionSettingsBody) -> SessionStatus:
    """Supervise the target from now on (re-enabling replaces the settings)."""
    triggers = body.triggers or (
        ["every_n_steps"] if body.every_n_steps is not None else ["after_reply"]
    )
    settings = SessionSettings(
        mode=body.mode,
        triggers=tuple(triggers),
        every_n_steps=body.every_n_steps,
        throttle_seconds=body.throttle_seconds,
        budget_calls=body.budget_calls,
        budget_tokens=body.budget_tokens,
        budget_period_seconds=body.budget_period_seconds,
    )
    now = SystemClock().now()
    resolved = resolve_target(store, target)
    session = enable_supervision(store, resolved, settings, now=now)
    return session_status(store, session, now=now)


@router.post("/{target}/disable")
def disable(store: StoreDep, target: TargetRef) -> SessionStatus:
    """Stop supervising the target; its runs and findings are kept."""
    now = SystemClock().now()
    session = disable_supervision(store, resolve_target(store, target), now=now)
    return session_status(store, session, now=now)
