"""Trigger policy (SPEC SUP-2): which new events of a target fire which trigger.

A session remembers the last trace event an analysis covered; everything after it is new.
Given the target's trace, the triggers are:

* ``after_reply`` — an assistant turn completed: a new assistant reply that is the last
  thing the agent did before the next user prompt (or before the end of the trace), with
  no tool call after it in the same turn.
* ``every_n_steps`` — at least N new trace events (messages, tool calls, tool results).
* ``key_event`` — among the new events:
  a failed tool call (status ``error``);
  waiting for approval: the trace ends with a new tool call that has no result yet (the
  transcript formats Proctor reads record no explicit permission-request event, so an
  unanswered call at the end is the signal);
  a budget at or past its warning ratio (default 80 %): a deterministic budget rule
  (tokens, wall time, tool calls, sub-tasks, artifacts, as set in the project's policy)
  crossed its warning or its limit on a new event.
  Metric anomalies are not detected: Proctor records no metrics yet.
* ``run_end`` — the run ended, with new events not yet analysed. Ended means an explicit
  end marker (a sub-agent conversation whose run record has a stop reason; a task with a
  completion time or a terminal status), or, without one, a trace that ends with a
  completed assistant turn and has been idle for ``RUN_END_IDLE`` (checked against the
  last event's time, so an old finished conversation counts as ended when imported).
* ``manual`` — never fires; only ``proctor supervise run`` analyses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from proctor.gate import stored_trace
from proctor.rules import Event, Trace, check_trace, find_policy
from proctor.rules.builtin import budgets
from proctor.store import StoredTranscript, SupervisionSession
from proctor.supervision._sessions import Target, Trigger

RUN_END_IDLE = timedelta(minutes=5)
"""How long a trace ending in a completed turn must stay unchanged to count as ended."""

TERMINAL_TASK_STATUSES = frozenset(
    {"completed", "complete", "done", "failed", "aborted", "cancelled", "canceled", "interrupted"}
)

_PRIORITY: tuple[Trigger, ...] = ("key_event", "run_end", "after_reply", "every_n_steps")
"""Order in which fired triggers name a run when several fire at once."""


@dataclass(frozen=True, slots=True)
class Observation:
    """A target's trace at one moment and how much of it the last analysis covered."""

    events: tuple[Event, ...]
    last_event_index: int
    now: datetime
    budget_sources: frozenset[str] = frozenset()
    """Source ids of events on which a deterministic budget rule reached its warning or limit."""
    ended: bool = False
    """The transcript carries an explicit end marker for the target."""

    @property
    def new_events(self) -> tuple[Event, ...]:
        """Events no analysis has covered yet."""
        return tuple(e for e in self.events if e.index > self.last_event_index)

    @property
    def latest_index(self) -> int:
        """Index of the newest event (-1 for an empty trace)."""
        return self.events[-1].index if self.events else -1


def observe(
    transcript: StoredTranscript,
    target: Target,
    session: SupervisionSession,
    *,
    now: datetime,
) -> Observation:
    """What the triggers of ``session`` look at; budget rules run only for ``key_event``."""
    trace = stored_trace(transcript)
    sources = _budget_sources(trace) if "key_event" in session.triggers else frozenset()
    return Observation(
        events=trace.events,
        last_event_index=session.last_event_index,
        now=now,
        budget_sources=sources,
        ended=_has_end_marker(transcript, target),
    )


def fired_triggers(
    session: SupervisionSession, observation: Observation, *, idle: timedelta = RUN_END_IDLE
) -> tuple[Trigger, ...]:
    """The session's triggers that the new events fire, most urgent first."""
    new = observation.new_events
    if not new:
        return ()
    fired: set[Trigger] = set()
    if "key_event" in session.triggers and key_event_reasons(observation):
        fired.add("key_event")
    if "run_end" in session.triggers and run_ended(observation, idle=idle):
        fired.add("run_end")
    if "after_reply" in session.triggers and any(_ends_turn(observation.events, e) for e in new):
        fired.add("after_reply")
    every = session.every_n_steps
    if "every_n_steps" in session.triggers and every is not None and len(new) >= every:
        fired.add("every_n_steps")
    return tuple(name for name in _PRIORITY if name in fired)


def key_event_reasons(observation: Observation) -> tuple[str, ...]:
    """Which key events are among the new events: tool failure, waiting for approval, budget."""
    new = observation.new_events
    reasons: list[str] = []
    if any(e.kind == "result" and e.call is not None and e.call.status == "error" for e in new):
        reasons.append("tool failure")
    last = observation.events[-1] if observation.events else None
    if (
        last is not None
        and last.index > observation.last_event_index
        and last.kind == "call"
        and last.call is not None
        and last.call.status == "pending"
    ):
        reasons.append("waiting for approval")
    if any(e.source_id in observation.budget_sources for e in new):
        reasons.append("budget")
    return tuple(reasons)


def run_ended(observation: Observation, *, idle: timedelta = RUN_END_IDLE) -> bool:
    """True when the target's run has ended (explicit marker, or a completed turn left idle)."""
    if observation.ended:
        return True
    if not observation.events:
        return False
    last = observation.events[-1]
    if not _ends_turn(observation.events, last) or last.at is None:
        return False
    return observation.now - last.at >= idle


def _ends_turn(events: Sequence[Event], event: Event) -> bool:
    """An assistant reply after which the agent did nothing more before the next prompt.

    Messages of other kinds in between (injected hook output, harness notices) do not
    continue the turn; a tool call or another assistant message does.
    """
    message = event.message
    if message is None or message.role != "assistant" or message.kind != "reply":
        return False
    for later in events[event.index + 1 :]:
        if later.message is None or later.message.role == "assistant":
            return False
        if later.message.role == "user" and later.message.kind == "prompt":
            return True
    return True


def _budget_sources(trace: Trace) -> frozenset[str]:
    context = trace.context
    policy = find_policy(cwd=context.cwd, project=context.project)
    rules = [type(rule)() for rule in budgets.RULES]
    return frozenset(
        f.trigger_source_id
        for f in check_trace(trace, policy, rules)
        if f.trigger_source_id is not None
    )


def _has_end_marker(transcript: StoredTranscript, target: Target) -> bool:
    if target.task_id is not None:
        task = next((t for t in transcript.tasks if t.task_id == target.task_id), None)
        return task is not None and (
            task.completed_at is not None or task.status.lower() in TERMINAL_TASK_STATUSES
        )
    run = transcript.subagent_run
    return run is not None and run.stop_kind is not None
