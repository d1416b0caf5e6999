"""Live supervision sessions: list, show, enable, disable, run now (SUP-1, SUP-2, SUP-9).

A target is a conversation id or unique prefix, or ``task:<id>``. Supervision is off by
default; enabling starts no analysis by itself (events already stored count as seen).
"Run now" (``POST /{target}/run``) is ``proctor supervise run`` for the web UI: it
checks what would refuse the run at once (no usable model connection, a spent budget),
queues the analysis in the server's background and answers ``202 queued`` without
waiting for the model; the run then shows as the session's last run.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, FastAPI, Path, Query, Request

from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.api._session_models import RunNowBody, RunQueued, SessionPage, SessionSettingsBody
from proctor.errors import ConfigError, ModelError, NotFoundError
from proctor.store import ModelSettingsReader, SqlStore
from proctor.supervision import SessionStatus

if TYPE_CHECKING:
    from proctor.jobs import AnalysisQueue

router = APIRouter(prefix="/sessions", tags=["supervision"])
_manual_lock = threading.Lock()

TargetRef = Annotated[
    str,
    Path(
        min_length=1,
        max_length=300,
        description="A conversation id or unique prefix, or task:<id>.",
    ),
]


def _connection(store: ModelSettingsReader) -> tuple[str | None, str | None]:
    from proctor.models import resolve_supervisor_connection

    try:
        connection = resolve_supervisor_connection(store)
    except ModelError as exc:
        return None, str(exc)
    return f"{connection.name} ({connection.provider}, {connection.model})", None


@router.get("")
def list_sessions(
    store: ReaderDep,
    enabled_only: Annotated[bool, Query(description="Only enabled sessions.")] = False,
    limit: Limit = 20,
    offset: Offset = 0,
) -> SessionPage:
    """Supervised targets (enabled and disabled) with state, budget use and last run."""
    from proctor.supervision import SystemClock, session_status

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
def show_session(store: ReaderDep, target: TargetRef) -> SessionStatus:
    """One target's session: state, usage this period, last run, pending analysis."""
    from proctor.supervision import SystemClock, resolve_target, session_status

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
    from proctor.supervision import (
        SessionSettings,
        SystemClock,
        enable_supervision,
        resolve_target,
        session_status,
    )

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
    from proctor.supervision import SystemClock, disable_supervision, resolve_target, session_status

    now = SystemClock().now()
    session = disable_supervision(store, resolve_target(store, target), now=now)
    return session_status(store, session, now=now)


@router.post("/{target}/run", status_code=202)
def run_now(
    request: Request, store: StoreDep, target: TargetRef, body: RunNowBody | None = None
) -> RunQueued:
    """Queue an analysis of the target now (skips the throttle, never the budget).

    Refused at once, with what to do, when no model connection is usable or the
    session's budget for this period is spent; works on a target without a session too
    (mode ``general`` unless ``mode`` is given). Never waits for the model.
    """
    from proctor.jobs import manual_key
    from proctor.supervision import SystemClock, budget_spent, resolve_target, session_status

    resolved = resolve_target(store, target)
    _, problem = _connection(store)
    if problem is not None:
        raise ConfigError(f"no analysis can run: {problem} (or add one under Settings)")
    now = SystemClock().now()
    session = store.supervision_session(resolved.target_id)
    if session is not None:
        status = session_status(store, session, now=now)
        if budget_spent(session, status.usage):
            raise ConfigError(
                f"supervision paused: budget — {resolved.label} has used its budget for this "
                f"period; it resets at {status.period_ends_at.isoformat()}, or raise it by "
                "enabling supervision again with a larger budget"
            )
    mode = body.mode if body is not None else None
    queued = manual_queue(request.app, store).submit([manual_key(resolved.label, mode)])
    return RunQueued(
        target=resolved.label,
        mode=mode or (session.mode if session is not None else "general"),
        status="queued" if queued else "already queued",
    )


def manual_queue(app: FastAPI, store: SqlStore) -> AnalysisQueue:
    """The app's queue of manual analyses (created on first use, stopped with the app)."""
    from proctor.jobs import AnalysisQueue, run_manual_analyses

    with _manual_lock:
        queue: AnalysisQueue | None = getattr(app.state, "manual_analyses", None)
        if queue is None or queue.store is not store:
            queue = AnalysisQueue(store, workers=2, work=run_manual_analyses)
            app.state.manual_analyses = queue
        return queue


def stop_manual_queue(app: FastAPI) -> None:
    """Let running manual analyses finish and start no more (app shutdown)."""
    queue: AnalysisQueue | None = getattr(app.state, "manual_analyses", None)
    if queue is not None:
        queue.stop()
