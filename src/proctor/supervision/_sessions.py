"""Live supervision sessions (SPEC SUP-1, SUP-9): what is supervised, how, and within what budget.

Supervision is off by default: nothing is analysed until a user enables a session for a
target — a conversation, or one task inside a conversation (``task:<id>``). Automation
runs are accepted by the target parser but refused until heartbeat plans exist.

A session's budget counts model calls (every attempt, as recorded with its usage) and
tokens of the session's runs per period. Periods are consecutive windows of
``budget_period_seconds`` starting when the session was created; when either limit is
reached the session shows ``paused: budget`` and makes no call until the next period.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal, get_args

from proctor.errors import ConfigError
from proctor.store import ReadStore, Store, SupervisionRun, SupervisionSession, SupervisionUsage
from proctor.store import SessionState as _SessionState
from proctor.store import SupervisionMode as Mode
from proctor.store import SupervisionTrigger as _SupervisionTrigger

Trigger = _SupervisionTrigger
"""When an analysis runs (SPEC SUP-2); ``manual`` means only ``proctor supervise run``."""
TRIGGERS: tuple[Trigger, ...] = get_args(Trigger)
MODES: tuple[Mode, ...] = get_args(Mode)

SessionState = _SessionState
"""What a session shows: analysing, paused until its budget period turns, or off."""
ACTIVE: SessionState = "active"
PAUSED_BUDGET: SessionState = "paused: budget"
DISABLED: SessionState = "disabled"

TASK_PREFIX = "task:"
RUN_PREFIX = "run:"


SessionStore = Store
"""The store live supervision works on (``Store`` includes supervision records, model
settings and goals)."""


@dataclass(frozen=True, slots=True)
class Target:
    """What a session supervises: a conversation, or one task inside a conversation."""

    target_type: Literal["conversation", "task"]
    target_id: str
    conversation_id: str
    """The conversation whose events the target's analyses read."""

    @property
    def label(self) -> str:
        """How the user names it: the conversation id, or ``task:<id>``."""
        return TASK_PREFIX + self.target_id if self.target_type == "task" else self.target_id

    @property
    def task_id(self) -> str | None:
        """The task's id for a task target."""
        return self.target_id if self.target_type == "task" else None


def resolve_target(store: ReadStore, ref: str) -> Target:
    """The target a user named: a conversation id/prefix, ``task:<id>`` (``run:<id>`` is refused)."""
    if ref.startswith(RUN_PREFIX):
        raise ConfigError(
            f"{ref!r} names an automation run; automation runs arrive with heartbeat plans — "
            "supervise a conversation (its id) or a task (task:<id>) for now"
        )
    if ref.startswith(TASK_PREFIX):
        task_id, conversation_id = store.task_conversation_id(ref.removeprefix(TASK_PREFIX))
        return Target("task", task_id, conversation_id)
    conversation_id = store.resolve_conversation_id(ref)
    return Target("conversation", conversation_id, conversation_id)


def target_of(store: SessionStore, session: SupervisionSession) -> Target:
    """The target a stored session binds."""
    if session.target_type == "task":
        task_id, conversation_id = store.task_conversation_id(session.target_id)
        return Target("task", task_id, conversation_id)
    return Target("conversation", session.target_id, session.target_id)


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """How a target is supervised: mode, triggers, throttle and budget."""

    mode: Mode = "general"
    triggers: tuple[Trigger, ...] = ("after_reply",)
    every_n_steps: int | None = None
    """Events between analyses for the ``every_n_steps`` trigger."""
    throttle_seconds: float = 30.0
    """Least time between the starts of two automatic analyses of the target."""
    budget_calls: int | None = 60
    """Model calls per period (None: no limit)."""
    budget_tokens: int | None = None
    """Input plus output tokens per period (None: no limit)."""
    budget_period_seconds: float = 3600.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        unknown = [name for name in self.triggers if name not in TRIGGERS]
        if unknown or not self.triggers:
            raise ConfigError(
                f"triggers must be some of {', '.join(TRIGGERS)}, not {list(self.triggers)}"
            )
        if "manual" in self.triggers and len(set(self.triggers)) > 1:
            raise ConfigError(
                "the manual trigger means analyses run only through `proctor supervise run`; "
                "drop it or drop the other triggers"
            )
        if ("every_n_steps" in self.triggers) != (self.every_n_steps is not None):
            raise ConfigError("--every N goes with the every_n_steps trigger, and only with it")
        if self.every_n_steps is not None and self.every_n_steps < 1:
            raise ConfigError(f"--every must be at least 1, not {self.every_n_steps}")
        if self.throttle_seconds < 0:
            raise ConfigError(f"the throttle cannot be negative ({self.throttle_seconds} s)")
        for name in ("budget_calls", "budget_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name.replace('_', ' ')} must be at least 1, not {value}")
        if self.budget_period_seconds < 60:
            raise ConfigError(
                f"the budget period must be at least one minute, not {self.budget_period_seconds} s"
            )


def enable_supervision(
    store: SessionStore, target: Target, settings: SessionSettings, *, now: datetime
) -> SupervisionSession:
    """Supervise ``target`` from now on (re-enabling replaces the settings).

    Events already stored count as seen: enabling starts no analysis by itself.
    """
    from proctor.gate import stored_trace  # and the rules' trace: imported on first use

    trace = stored_trace(store.transcript(target.conversation_id))
    latest = trace.events[-1].index if trace.events else -1
    existing = store.supervision_session(target.target_id)
    return store.put_supervision_session(
        SupervisionSession(
            session_id=existing.session_id if existing else uuid.uuid4().hex,
            target_type=target.target_type,
            target_id=target.target_id,
            mode=settings.mode,
            triggers=tuple(dict.fromkeys(settings.triggers)),
            every_n_steps=settings.every_n_steps,
            throttle_seconds=settings.throttle_seconds,
            budget_calls=settings.budget_calls,
            budget_tokens=settings.budget_tokens,
            budget_period_seconds=settings.budget_period_seconds,
            enabled=True,
            state=ACTIVE,
            last_run_at=existing.last_run_at if existing else None,
            last_event_index=latest,
            pending=False,
            created_at=existing.created_at if existing else now,
            updated_at=now,
        )
    )


def disable_supervision(
    store: SessionStore, target: Target, *, now: datetime
) -> SupervisionSession:
    """Stop supervising ``target``; its runs and findings are kept."""
    session = store.supervision_session(target.target_id)
    if session is None:
        raise ConfigError(f"{target.label} is not supervised; nothing to disable")
    return store.put_supervision_session(
        replace(session, enabled=False, state=DISABLED, pending=False, updated_at=now)
    )


def session_mode(session: SupervisionSession) -> Mode:
    """The session's mode (checked when the session was enabled)."""
    return session.mode


def budget_period(session: SupervisionSession, now: datetime) -> tuple[datetime, datetime]:
    """Start and end of the budget period ``now`` falls in."""
    length = timedelta(seconds=session.budget_period_seconds)
    elapsed = max(now - session.created_at, timedelta(0))
    start = session.created_at + length * (elapsed // length)
    return start, start + length


def budget_spent(session: SupervisionSession, usage: SupervisionUsage) -> bool:
    """True when the period's calls or tokens reached the session's budget."""
    calls_spent = session.budget_calls is not None and usage.calls >= session.budget_calls
    tokens_spent = session.budget_tokens is not None and usage.tokens >= session.budget_tokens
    return calls_spent or tokens_spent


def session_state(session: SupervisionSession, usage: SupervisionUsage) -> SessionState:
    """What the session shows now: disabled, paused by its budget, or active."""
    if not session.enabled:
        return DISABLED
    return PAUSED_BUDGET if budget_spent(session, usage) else ACTIVE


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """A session as ``proctor supervise status`` shows it."""

    session: SupervisionSession
    label: str
    state: SessionState
    usage: SupervisionUsage
    period_ends_at: datetime
    last_run: SupervisionRun | None
    due_at: datetime | None
    """When a pending analysis may start (None: nothing pending)."""


def session_status(
    store: ReadStore, session: SupervisionSession, *, now: datetime
) -> SessionStatus:
    """The state, usage this period, last run and pending analysis of one session."""
    start, end = budget_period(session, now)
    usage = store.supervision_usage(session.session_id, since=start)
    runs = store.supervision_runs(target_id=session.target_id, limit=1)
    state = session_state(session, usage)
    due_at: datetime | None = None
    if session.pending and session.enabled:
        due_at = end if state == PAUSED_BUDGET else now
        if session.last_run_at is not None:
            due_at = max(due_at, session.last_run_at + timedelta(seconds=session.throttle_seconds))
    label = TASK_PREFIX + session.target_id if session.target_type == "task" else session.target_id
    return SessionStatus(
        session=session,
        label=label,
        state=state,
        usage=usage,
        period_ends_at=end,
        last_run=runs[0] if runs else None,
        due_at=due_at,
    )
