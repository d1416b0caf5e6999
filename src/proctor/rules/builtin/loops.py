"""Rule family: loops, an agent repeating itself without progress (category ``repetition``).

Stuck patterns in the spirit of OpenHands' StuckDetector, on Proctor's events
(thresholds in brackets):

- ``repeated_tool_call`` [3]: the same call (tool and arguments) gives the same result
  N times in a row, with no other call, user prompt or different result in between;
- ``repeated_action_result`` [4]: the same call gives the same result N times within the
  last 20 calls, consecutive or not;
- ``repeated_action_error`` [3]: the same call fails with the same error N times within
  the last 20 calls;
- ``alternating_loop`` [6]: two calls alternate A-B-A-B… with identical results over N
  steps;
- ``monologue`` [4 / 3]: N assistant messages in a row with no tool call and no user
  message, or the same assistant text (40+ characters) N times in one turn. In
  multi-agent runs a hand-off to another agent is a delegated call, so an orchestrator
  that delegates is acting, not talking; its status records (a JSON ledger) and a
  delegated agent's reply shown again are not talk either.

"Same" is normalised (see ``_loop_track``): volatile numbers in results (times, durations,
ids, pids) are masked so real retries match, while a changed result counts as progress
so polling that gets somewhere is left alone. A user prompt starts over.

Among the call rules one loop gives one finding: failing repeats belong to
``repeated_action_error``, a run of identical consecutive calls to ``repeated_tool_call``,
an alternation to ``alternating_loop``; ``repeated_action_result`` reports what none of
them covers. A rule only leaves a case to another when that rule is running. A finding
cites the calls that made the loop; further repeats update it (same key) with a higher
``actual``. ``monologue`` watches messages, not calls, and may report the same episode.

Severity is medium, high when the repeated call fails or has side effects. The gate
warns before a call that would extend a loop, and asks (``repeated_action_error``)
before the Nth identical call that failed the same way every time before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from proctor.findings import Evidence, Severity
from proctor.rules._policy import RuleMode
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event, EventKind
from proctor.rules.builtin._loop_evidence import cite_action, cite_error, error_line
from proctor.rules.builtin._loop_track import (
    WINDOW,
    LoopTracker,
    Step,
    action_key,
    action_label,
)
from proctor.rules.builtin._monologue import Monologue
from proctor.transcript import ToolCall

REPEATED_CALLS = 3
REPEATED_RESULTS = 4
REPEATED_ERRORS = 3
ALTERNATION_STEPS = 6


@dataclass(slots=True)
class _Report:
    """A loop already reported: later repeats update it instead of opening a new finding."""

    evidence: tuple[Evidence, ...]
    title: str
    count: int
    last_ordinal: int


@dataclass(slots=True)
class _State:
    tracker: LoopTracker
    reports: dict[Any, _Report] = field(default_factory=dict)
    """Loops reported since the latest user prompt (older ones cannot continue)."""
    epoch: int = 0


def _severity(steps: Sequence[Step]) -> Severity:
    return "high" if any(s.failed or s.effects for s in steps) else "medium"


class _LoopRule(Rule):
    """Shared plumbing: the tracker, reports that grow, gate hits that cite the proposed call."""

    category = "repetition"
    threshold: ClassVar[int]

    def start(self, context: RuleContext) -> _State:
        return _State(LoopTracker.of(context, self.id))

    def watches(self, context: RuleContext) -> frozenset[EventKind]:
        tracker = LoopTracker.of(context, self.id)
        return self.observes if tracker.feeds(self.id) else frozenset({"result"})

    def observe(self, state: _State, event: Event, context: RuleContext) -> Iterable[Hit]:
        step = state.tracker.advance(event)
        if state.epoch != state.tracker.epoch:
            # A user prompt ended every loop; keep memory bounded. (A rule that sees only
            # results notices at the next one, before it reports again.)
            state.reports.clear()
            state.epoch = state.tracker.epoch
        return () if step is None else self.on_step(state, step)

    def on_step(self, state: _State, step: Step) -> Iterable[Hit]:
        """Judge a finished call."""
        return ()

    def defers_to(self, state: _State, rule_id: str) -> bool:
        """True when ``rule_id`` runs in this conversation and so reports the case itself."""
        return rule_id in state.tracker.enabled

    def report(
        self,
        state: _State,
        key: Any,
        steps: Sequence[Step],
        title: str,
        content: Callable[[int], str],
    ) -> Hit:
        """A hit for a loop: new evidence for a new loop, the same key for a longer one."""
        current = steps[-1]
        known = state.reports.get(key)
        if known is not None and current.ordinal - known.last_ordinal <= WINDOW:
            known.count += 1
            known.last_ordinal = current.ordinal
        else:
            evidence = tuple(cite_action(s.call) for s in steps)
            error = cite_error(steps[0].call) if steps[0].failed else None
            evidence += () if error is None else (error,)
            known = _Report(evidence, title, len(steps), current.ordinal)
            state.reports[key] = known
        return Hit(
            title=known.title,
            severity=_severity(steps),
            evidence=known.evidence,
            content=content(known.count),
            actual=known.count,
            threshold=self.threshold,
            trigger=current.call.source_id,
        )

    def gate_hit(self, proposed: ToolCall, steps: Sequence[Step], title: str, content: str) -> Hit:
        """A gate hit citing the proposed call and the earlier ones it would repeat."""
        evidence = (cite_action(proposed), *(cite_action(s.call) for s in steps))
        return Hit(
            title=title,
            severity=_severity(steps),
            evidence=evidence,
            content=content,
            actual=len(steps) + 1,
            threshold=self.threshold,
            trigger=proposed.source_id,
        )


class RepeatedToolCall(_LoopRule):
    """The same call with the same result several times in a row, nothing else between."""

    id = "repeated_tool_call"
    version = 1
    description = "The same tool call (same arguments, same result) repeated 3+ times in a row"
    gate_mode: ClassVar[RuleMode] = "warn"
    threshold = REPEATED_CALLS

    def _owned(self, state: _State, step: Step) -> bool:
        return not (step.failed and self.defers_to(state, RepeatedActionError.id))

    def on_step(self, state: _State, step: Step) -> Iterable[Hit]:
        if step.run_length < self.threshold or not self._owned(state, step):
            return ()
        run = state.tracker.current_run()
        label = action_label(step.call)
        return (
            self.report(
                state,
                ("run", step.run),
                run,
                f"Same tool call repeated with no progress: {label}",
                lambda n: (
                    f"`{label}` ran {n} times in a row with the same result and nothing "
                    "else in between; repeating it is unlikely to change anything."
                ),
            ),
        )

    def before_call(self, state: _State, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        run = state.tracker.current_run()
        if len(run) < self.threshold - 1 or run[-1].action != action_key(call):
            return ()
        if not self._owned(state, run[-1]):
            return ()
        label = action_label(call)
        return (
            self.gate_hit(
                call,
                run,
                f"Call would repeat the same tool call again: {label}",
                f"`{label}` already ran {len(run)} times in a row with the same result.",
            ),
        )


class RepeatedActionResult(_LoopRule):
    """The same call with the same result several times in a window, not only in a row."""

    id = "repeated_action_result"
    version = 1
    description = "The same tool call with the same result 4+ times within the last 20 calls"
    gate_mode: ClassVar[RuleMode] = "warn"
    threshold = REPEATED_RESULTS

    def _owned(self, state: _State, steps: Sequence[Step]) -> bool:
        if steps[-1].failed and self.defers_to(state, RepeatedActionError.id):
            return False
        if len({s.run for s in steps}) == 1 and self.defers_to(state, RepeatedToolCall.id):
            return False
        alternations = {s.alternation for s in steps}
        return not (
            len(alternations) == 1
            and None not in alternations
            and self.defers_to(state, AlternatingLoop.id)
        )

    def on_step(self, state: _State, step: Step) -> Iterable[Hit]:
        if state.tracker.count(step.action) < self.threshold:
            return ()
        steps = state.tracker.same_steps(step)
        if len(steps) < self.threshold or not self._owned(state, steps):
            return ()
        label = action_label(step.call)
        return (
            self.report(
                state,
                state.tracker.signature(step),
                steps,
                f"Same action returned the same result repeatedly: {label}",
                lambda n: (
                    f"`{label}` returned the same result {n} times within the last {WINDOW} calls."
                ),
            ),
        )

    def before_call(self, state: _State, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        last = state.tracker.last_of(action_key(call))
        if last is None or state.tracker.count(last.action) < self.threshold - 1:
            return ()
        steps = state.tracker.same_steps(last)
        if len(steps) < self.threshold - 1 or not self._owned(state, steps):
            return ()
        label = action_label(call)
        return (
            self.gate_hit(
                call,
                steps,
                f"Call would repeat an action that keeps returning the same result: {label}",
                f"`{label}` returned the same result {len(steps)} times in the last "
                f"{WINDOW} calls.",
            ),
        )


class RepeatedActionError(_LoopRule):
    """The same call failing with the same error again and again."""

    id = "repeated_action_error"
    version = 1
    description = "The same tool call failed with the same error 3+ times within the last 20 calls"
    gate_mode: ClassVar[RuleMode] = "ask"
    threshold = REPEATED_ERRORS

    def on_step(self, state: _State, step: Step) -> Iterable[Hit]:
        if not step.failed or state.tracker.count(step.action) < self.threshold:
            return ()
        steps = state.tracker.same_steps(step)
        if len(steps) < self.threshold:
            return ()
        label = action_label(step.call)
        error = error_line(step.call)
        return (
            self.report(
                state,
                state.tracker.signature(step),
                steps,
                f"Same call failed repeatedly with the same error: {label}",
                lambda n: (
                    f"`{label}` failed {n} times with the same error"
                    + (f" ({error})" if error else "")
                    + "; retrying unchanged will not fix it."
                ),
            ),
        )

    def before_call(self, state: _State, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        last = state.tracker.last_of(action_key(call))
        if last is None or not last.failed:
            return ()
        steps = state.tracker.same_steps(last)
        if len(steps) < self.threshold - 1:
            return ()
        label = action_label(call)
        error = error_line(last.call)
        return (
            self.gate_hit(
                call,
                steps,
                f"Call would retry a command that keeps failing the same way: {label}",
                f"`{label}` already failed {len(steps)} times with the same error"
                + (f" ({error})" if error else "")
                + f"; this would be attempt {len(steps) + 1}.",
            ),
        )


class AlternatingLoop(_LoopRule):
    """Two calls alternating A-B-A-B with identical results: going in circles."""

    id = "alternating_loop"
    version = 1
    description = "Two tool calls alternating A-B-A-B with identical results over 6+ steps"
    gate_mode: ClassVar[RuleMode] = "warn"
    threshold = ALTERNATION_STEPS

    def on_step(self, state: _State, step: Step) -> Iterable[Hit]:
        if step.alternation is None:
            return ()
        steps = [s for s in state.tracker.steps if s.alternation == step.alternation]
        labels = _pair_label(steps)
        return (
            self.report(
                state,
                ("alternation", step.alternation),
                steps,
                f"Agent alternates between the same two calls: {labels}",
                lambda n: f"{labels} alternated for {n} steps with identical results each time.",
            ),
        )

    def before_call(self, state: _State, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        recent = list(state.tracker.steps)[-(self.threshold - 1) :]
        if len(recent) < self.threshold - 1 or recent[-2].action != action_key(call):
            return ()
        a, b = recent[-1], recent[-2]
        if a.action == b.action or not all(
            s.same_as(a if i % 2 == 0 else b) for i, s in enumerate(reversed(recent))
        ):
            return ()
        labels = _pair_label(recent)
        return (
            self.gate_hit(
                call,
                recent,
                f"Call would continue an A-B-A-B loop: {labels}",
                f"{labels} already alternated {len(recent)} times with identical results.",
            ),
        )


def _pair_label(steps: Sequence[Step]) -> str:
    first = action_label(steps[0].call, 50)
    second = next((action_label(s.call, 50) for s in steps if s.action != steps[0].action), "")
    return f"`{first}` and `{second}`"


class MonologueRule(Rule):
    """The assistant talking to itself: many messages with no action, or the same text again."""

    id = "monologue"
    version = 2
    category = "repetition"
    description = (
        "4+ assistant messages in a row with no tool call or user message, "
        "or the same assistant text 3+ times in one turn"
    )
    gate_mode: ClassVar[RuleMode] = "warn"

    def start(self, context: RuleContext) -> Monologue:
        return Monologue()

    def observe(self, state: Monologue, event: Event, context: RuleContext) -> Iterable[Hit]:
        return state.advance(event)

    def finish(self, state: Monologue, context: RuleContext) -> Iterable[Hit]:
        return state.finish()


RULES: list[Rule] = [
    RepeatedToolCall(),
    RepeatedActionResult(),
    RepeatedActionError(),
    AlternatingLoop(),
    MonologueRule(),
]
