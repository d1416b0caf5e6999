"""Running rules: whole traces, live event by event, and before a tool call (the gate).

``Supervisor`` holds the per-conversation state of every rule, so feeding it one more
event costs only that event, and only for the rules that watch its kind; the gate asks
it about a proposed call without changing that state. ``check_trace`` is the whole-trace
convenience over the same object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from proctor.findings import Finding, finding_key
from proctor.rules import builtin
from proctor.rules._policy import DEFAULT_POLICY, Policy, RuleMode
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import EVENT_KINDS, Event, EventKind, Trace, TraceContext
from proctor.transcript import ToolCall

Decision = Literal["allow", "deny", "ask"]
_Observe = Callable[[Any, Event, RuleContext], Iterable[Hit]]
_DECISION_ORDER: dict[Decision, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The answer to "may this call proceed?"."""

    decision: Decision
    reason: str = ""
    rule: str | None = None
    """The rule behind a deny or ask."""
    findings: tuple[Finding, ...] = ()
    """Everything the rules found about the proposed call, whatever the decision."""


@dataclass
class Supervisor:
    """Incremental rule evaluation for one conversation."""

    context: TraceContext
    policy: Policy = DEFAULT_POLICY
    rules: Sequence[Rule] | None = None
    _rules: list[tuple[Rule, Any]] = field(init=False)
    """The rules at work here (in rule order) with their state."""
    _finishing: list[tuple[Rule, Any]] = field(init=False)
    """Those that conclude something at the end of a run."""
    _watching: dict[EventKind, list[tuple[Rule, Any, _Observe]]] = field(init=False)
    """Per event kind, the rules that watch it (in rule order) with their state and their
    ``observe`` method."""
    _rule_context: RuleContext = field(init=False)
    _next_index: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        chosen = self.rules if self.rules is not None else builtin.BUILTIN_RULES
        if self.context.kind == "compaction":
            chosen = ()  # a compaction call summarises the run; it is not agent work to judge
        context = self._rule_context = RuleContext(self.policy, self.context)
        rules: list[tuple[Rule, Any]] = []
        finishing: list[tuple[Rule, Any]] = []
        watching: dict[EventKind, list[tuple[Rule, Any, _Observe]]] = {
            kind: [] for kind in EVENT_KINDS
        }
        for rule, concludes, kinds in _lineup(tuple(chosen), self.policy):
            if kinds is None:
                kinds = rule.watches(context)
                if not kinds:
                    continue  # idle in this conversation: nothing to ask
            state = rule.start(context)
            rules.append((rule, state))
            if concludes:
                finishing.append((rule, state))
            for kind in kinds:
                watching[kind].append((rule, state, rule.observe))
        self._rules, self._finishing, self._watching = rules, finishing, watching

    @property
    def events_seen(self) -> int:
        """How many events were observed."""
        return self._next_index

    def observe(self, event: Event) -> list[Finding]:
        """Feed one event that happened; return the findings it caused."""
        return [self._finding(rule, hit) for rule, hit in self._hits((event,))]

    def _hits(self, events: Iterable[Event]) -> Iterator[tuple[Rule, Hit]]:
        """Feed events in order; what the rules that watch each one make of it."""
        context, watching = self._rule_context, self._watching
        for event in events:
            self._next_index = event.index + 1
            for rule, state, observe in watching[event.kind]:
                hits = observe(state, event, context)
                if hits:  # most events cause nothing (an iterator is always true)
                    for hit in hits:
                        yield rule, hit

    def observe_all(self, events: Iterable[Event]) -> list[Finding]:
        """Feed many events in order."""
        return [self._finding(rule, hit) for rule, hit in self._hits(events)]

    def finish(self) -> list[Finding]:
        """Conclude the run: end-of-run rules (required artifacts, final claims)."""
        return [self._finding(rule, hit) for rule, hit in self._final_hits()]

    def _final_hits(self) -> list[tuple[Rule, Hit]]:
        return [
            (rule, hit)
            for rule, state in self._finishing
            for hit in rule.finish(state, self._rule_context)
        ]

    def before_call(self, call: ToolCall) -> GateDecision:
        """Decide on a call about to run, from the policy and everything observed so far."""
        decision: Decision = "allow"
        deciding: tuple[Rule, Hit] | None = None
        findings: list[Finding] = []
        for rule, state in self._rules:
            for hit in rule.before_call(state, call, self._rule_context):
                findings.append(self._finding(rule, hit))
                mode = self.policy.rules.get(rule.id) or hit.gate or rule.gate_mode
                wanted: Decision = "deny" if mode == "deny" else "ask" if mode == "ask" else "allow"
                if _DECISION_ORDER[wanted] > _DECISION_ORDER[decision]:
                    decision, deciding = wanted, (rule, hit)
        if deciding is None:
            return GateDecision("allow", findings=tuple(findings))
        rule, hit = deciding
        reason = f"{hit.title} [{rule.id}]" + (f": {hit.content}" if hit.content else "")
        return GateDecision(decision, reason=reason, rule=rule.id, findings=tuple(findings))

    def mode_of(self, rule: Rule) -> RuleMode:
        """What the gate does when ``rule`` fires: the policy's setting or the rule's default."""
        return self.policy.rules.get(rule.id, rule.gate_mode)

    def _key(self, rule: Rule, hit: Hit) -> str:
        return finding_key(rule.id, self.context.conversation_id, hit.evidence, hit.title)

    def _finding(self, rule: Rule, hit: Hit, key: str | None = None) -> Finding:
        conversation_id = self.context.conversation_id
        return Finding(
            key=key if key is not None else self._key(rule, hit),
            conversation_id=conversation_id,
            origin="rule",
            rule=rule.id,
            rule_version=rule.version,
            action=hit.action,
            category=hit.category or rule.category,
            severity=hit.severity,
            title=hit.title,
            content=hit.content,
            evidence=list(hit.evidence),
            confidence=hit.confidence,
            actual=hit.actual,
            threshold=hit.threshold,
            trigger_source_id=hit.trigger,
        )


_Lineup = tuple[tuple[Rule, bool, frozenset[EventKind] | None], ...]
_LINEUPS: dict[tuple[tuple[Rule, ...], int], tuple[Policy, _Lineup]] = {}
_LINEUPS_KEPT = 64


def _lineup(rules: tuple[Rule, ...], policy: Policy) -> _Lineup:
    """The rules at work under ``policy`` (not switched off, not idle), each with whether it
    concludes at the end of a run and the kinds of event it watches (None: it says per
    conversation). Worked out once per rule set and policy (policies are immutable)."""
    cached = _LINEUPS.get((rules, id(policy)))
    if cached is not None and cached[0] is policy:
        return cached[1]
    switched = policy.rules
    lineup = tuple(
        (
            rule,
            type(rule).finish is not Rule.finish,
            rule.observes if type(rule).watches is Rule.watches else None,
        )
        for rule in rules
        if switched.get(rule.id) != "off" and rule.active(policy)
    )
    if len(_LINEUPS) >= _LINEUPS_KEPT:
        _LINEUPS.clear()
    _LINEUPS[(rules, id(policy))] = (policy, lineup)
    return lineup


def check_trace(
    trace: Trace, policy: Policy = DEFAULT_POLICY, rules: Sequence[Rule] | None = None
) -> list[Finding]:
    """Run every rule over a whole trace; one finding per key (the latest wins)."""
    supervisor = Supervisor(trace.context, policy, rules)
    latest: dict[str, tuple[Rule, Hit]] = {}  # a growing loop reports again under one key
    for rule, hit in supervisor._hits(trace.events):
        latest[supervisor._key(rule, hit)] = (rule, hit)
    for rule, hit in supervisor._final_hits():
        latest[supervisor._key(rule, hit)] = (rule, hit)
    return [supervisor._finding(rule, hit, key) for key, (rule, hit) in latest.items()]
