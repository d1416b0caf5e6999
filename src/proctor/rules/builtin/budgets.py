"""Rule family: budgets — how much a run may spend (SPEC SUP-4, SUP-5).

One rule per dimension of ``[budgets]`` in the policy, so each can be switched off or
gated on its own (``[rules] tool_call_budget = "ask"``):

* ``token_budget`` (``tokens``): ``Message.usage.total_tokens``, summed.
* ``wall_time_budget`` (``wall_time_minutes``): minutes from the conversation's start
  (or its first timed event) to the latest event.
* ``tool_call_budget`` (``tool_calls``): tool calls made, failed ones too.
* ``subtask_budget`` (``subtasks``): sub-agents started (``Task``/``Agent``, Codex
  ``spawn_agent`` …).
* ``artifact_budget`` (``artifacts``): distinct files written or created by successful
  calls.

At ``warn_ratio`` (default 0.8) of a budget: a ``warn`` finding, medium. At 100 %: a
``pause`` finding, high. Each level fires once, on the event that crossed it (when one
event crosses both, only the pause). The gate (default ``deny``) refuses a call that
would take the tool-call, sub-task or artifact count past its budget, and any call once
the token or wall-time budget is spent. No budget is set by default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from proctor.findings import Evidence
from proctor.rules._evidence import cite_message
from proctor.rules._policy import Policy
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._file_access import file_accesses, is_spawn, succeeded
from proctor.rules.builtin._policy_support import cite_access, cite_span, origin, places
from proctor.transcript import ToolCall


@dataclass(slots=True)
class Meter:
    """Per-conversation state of one budget."""

    value: float = 0.0
    fired: set[str] = field(default_factory=set)
    first_at: datetime | None = None
    last_at: datetime | None = None
    artifacts: set[str] = field(default_factory=set)


def _plain(value: float) -> int | float:
    """Counts as integers, measured minutes and ratios to one decimal."""
    return int(value) if float(value).is_integer() else round(value, 1)


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _minutes(start: datetime, end: datetime) -> float:
    """Minutes from ``start`` to ``end``, to a tenth."""
    return round((end - start).total_seconds() / 60, 1)


def _cite_event(event: Event) -> Evidence:
    if event.message is not None:
        return cite_message(event.message)
    assert event.call is not None
    return cite_span(event.call, "name", event.call.name)


class _Budget(Rule):
    """A budget over one measured quantity; subclasses say how it is measured."""

    category = "budget"
    gate_mode = "deny"
    key: ClassVar[str]
    """Field of ``Budgets`` in the policy."""
    noun: ClassVar[str]
    unit: ClassVar[str]
    blocks_when_spent: ClassVar[bool] = False
    """Gate: refuse any call once the budget is spent (tokens, wall time)."""

    def limit(self, context: RuleContext) -> float | None:
        value = getattr(context.policy.budgets, self.key)
        return None if value is None else float(value)

    def active(self, policy: Policy) -> bool:
        return getattr(policy.budgets, self.key) is not None

    def start(self, context: RuleContext) -> Meter:
        return Meter(first_at=context.trace.started_at)

    def measure(self, meter: Meter, event: Event, context: RuleContext) -> bool:
        """Update the meter with an event; True when the value changed."""
        raise NotImplementedError

    def added_by(self, meter: Meter, call: ToolCall, context: RuleContext) -> float:
        """How much a proposed call would add (counted budgets)."""
        return 0.0

    def observe(self, state: Meter, event: Event, context: RuleContext) -> Iterable[Hit]:
        limit = self.limit(context)
        if limit is None or not self.measure(state, event, context):
            return ()
        ratio = context.policy.budgets.warn_ratio
        if state.value >= limit and "pause" not in state.fired:
            state.fired.update(("pause", "warn"))
            return [self._crossing(state.value, limit, limit, event, context)]
        if state.value >= ratio * limit and "warn" not in state.fired:
            state.fired.add("warn")
            return [self._crossing(state.value, ratio * limit, limit, event, context)]
        return ()

    def _crossing(
        self, value: float, threshold: float, limit: float, event: Event, context: RuleContext
    ) -> Hit:
        amount = f"{_number(value)} of {_number(limit)} {self.unit}"
        setting = f"budgets.{self.key} = {_number(limit)} in {origin(context.policy)}"
        if threshold >= limit:
            state_word = "exceeded" if value > limit else "used up"
            return Hit(
                title=f"{self.noun} budget {state_word}: {amount}",
                severity="high",
                action="pause",
                evidence=(self.cite(event, context),),
                content=f"The run has used {amount} ({setting}). Pause it and decide whether to go on.",
                actual=_plain(value),
                threshold=_plain(limit),
                trigger=event.source_id,
            )
        percent = min(round(100 * value / limit), 99)  # 99.8 % is not "100 %"
        return Hit(
            title=f"{self.noun} budget at {percent} %: {amount}",
            severity="medium",
            action="warn",
            evidence=(self.cite(event, context),),
            content=(
                f"The run has used {amount} ({setting}); warnings start at "
                f"{context.policy.budgets.warn_ratio:.0%} (budgets.warn_ratio)."
            ),
            actual=_plain(value),
            threshold=_plain(threshold),
            trigger=event.source_id,
        )

    def before_call(self, state: Meter, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        limit = self.limit(context)
        if limit is None:
            return ()
        setting = f"budgets.{self.key} = {_number(limit)} in {origin(context.policy)}"
        if self.blocks_when_spent:
            actual = self.value_at(state, call)
            if actual < limit:
                return ()
            amount = f"{_number(actual)} of {_number(limit)} {self.unit}"
            title = f"{self.noun} budget spent: {amount}"
            content = f"{call.name} is refused: {amount} are spent ({setting})."
        else:
            added = self.added_by(state, call, context)
            if added == 0 or state.value + added <= limit:
                return ()
            actual = state.value + added
            amount = f"{_number(actual)} of {_number(limit)} {self.unit}"
            title = f"{self.noun} budget would be exceeded: {amount}"
            content = f"{call.name} is refused: it would make {amount} ({setting})."
        return [
            Hit(
                title=title,
                severity="high",
                action="pause",
                evidence=(cite_span(call, "name", call.name),),
                content=content,
                actual=_plain(actual),
                threshold=_plain(limit),
                trigger=call.source_id,
            )
        ]

    def value_at(self, meter: Meter, call: ToolCall) -> float:
        """The measured value when a proposed call would start."""
        return meter.value

    def cite(self, event: Event, context: RuleContext) -> Evidence:
        """The event that crossed a level."""
        return _cite_event(event)


class TokenBudget(_Budget):
    """Model tokens used by the conversation."""

    id = "token_budget"
    version = 1
    description = "Model tokens (input + output, cache included) against budgets.tokens."
    key = "tokens"
    noun = "Token"
    unit = "tokens"
    blocks_when_spent = True
    observes = frozenset({"message"})

    def measure(self, meter: Meter, event: Event, context: RuleContext) -> bool:
        usage = event.message.usage if event.message is not None else None
        if usage is None or usage.total_tokens == 0:
            return False
        meter.value += usage.total_tokens
        return True


class WallTimeBudget(_Budget):
    """Minutes from the start of the conversation to its latest event."""

    id = "wall_time_budget"
    version = 1
    description = "Minutes from the start to the latest event against budgets.wall_time_minutes."
    key = "wall_time_minutes"
    noun = "Wall-time"
    unit = "minutes"
    blocks_when_spent = True

    def measure(self, meter: Meter, event: Event, context: RuleContext) -> bool:
        at = event.at
        if at is None:
            return False
        if meter.first_at is None or at < meter.first_at:
            meter.first_at = at
        meter.last_at = at if meter.last_at is None else max(meter.last_at, at)
        minutes = _minutes(meter.first_at, meter.last_at)
        if minutes <= meter.value:
            return False
        meter.value = minutes
        return True

    def value_at(self, meter: Meter, call: ToolCall) -> float:
        at = call.created_at or meter.last_at
        if at is None or meter.first_at is None:
            return meter.value
        return max(meter.value, _minutes(meter.first_at, at))


class ToolCallBudget(_Budget):
    """Tool calls made."""

    id = "tool_call_budget"
    version = 1
    description = "Tool calls made against budgets.tool_calls."
    key = "tool_calls"
    noun = "Tool call"
    unit = "calls"
    observes = frozenset({"call"})

    def measure(self, meter: Meter, event: Event, context: RuleContext) -> bool:
        if event.kind != "call":
            return False
        meter.value += 1
        return True

    def added_by(self, meter: Meter, call: ToolCall, context: RuleContext) -> float:
        return 1.0


class SubtaskBudget(_Budget):
    """Sub-agents started."""

    id = "subtask_budget"
    version = 1
    description = "Sub-agents started (Task, Agent, spawn_agent calls) against budgets.subtasks."
    key = "subtasks"
    noun = "Sub-task"
    unit = "sub-agents"
    observes = frozenset({"call"})

    def measure(self, meter: Meter, event: Event, context: RuleContext) -> bool:
        if event.kind != "call" or event.call is None or not is_spawn(event.call):
            return False
        meter.value += 1
        return True

    def added_by(self, meter: Meter, call: ToolCall, context: RuleContext) -> float:
        return 1.0 if is_spawn(call) else 0.0


class ArtifactBudget(_Budget):
    """Distinct files written or created by successful calls."""

    id = "artifact_budget"
    version = 1
    description = "Distinct files written or created against budgets.artifacts."
    key = "artifacts"
    noun = "Artifact"
    unit = "files"
    observes = frozenset({"result"})

    def cite(self, event: Event, context: RuleContext) -> Evidence:
        assert event.call is not None
        for access in file_accesses(event.call, context.policy.write_tools):
            if access.access == "write":
                return cite_access(event.call, access)
        return _cite_event(event)

    def _written(self, call: ToolCall, context: RuleContext) -> set[str]:
        where = places(context)
        return {
            where.resolve(access.path, access.base)
            for access in file_accesses(call, context.policy.write_tools)
            if access.access == "write"
        }

    def measure(self, meter: Meter, event: Event, context: RuleContext) -> bool:
        if event.kind != "result" or event.call is None or not succeeded(event.call):
            return False
        new = self._written(event.call, context) - meter.artifacts
        if not new:
            return False
        meter.artifacts |= new
        meter.value = len(meter.artifacts)
        return True

    def added_by(self, meter: Meter, call: ToolCall, context: RuleContext) -> float:
        return float(len(self._written(call, context) - meter.artifacts))


RULES: list[Rule] = [
    TokenBudget(),
    WallTimeBudget(),
    ToolCallBudget(),
    SubtaskBudget(),
    ArtifactBudget(),
]
