"""Goal detectors (SPEC GOAL-3): drift, context loss, completion claimed without evidence.

All three are deterministic (origin ``rule``, version 1) and see only the trace and the
conversation's goal versions; what each can and cannot see is in ``docs/goals.md``. The
model-based judgement of drift is the supervisor's ``goal`` mode, not this module.

- ``goal.drift``: within the span of one goal version, the agent's steps (tool calls
  and replies) stop sharing any salient term with the goal (and with what the user said
  since, and with the results of on-goal calls) for ``DRIFT_STEPS`` steps in a row,
  after at least ``DRIFT_ANCHOR`` steps that did. Steps without salient terms ("Let me
  check.") are neutral.
- ``goal.context_loss``: see ``_goal_context_loss``.
- ``goal.unverified_completion``: see ``_goal_completion``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from proctor.findings import Evidence, Finding, finding_key
from proctor.rules import Event, Trace, argument_strings, cite_call, cite_message
from proctor.rules.builtin import action_label
from proctor.store import GoalVersion
from proctor.supervisor._goal_completion import detect_unverified_completion
from proctor.supervisor._goal_context_loss import detect_context_loss
from proctor.supervisor._goal_terms import TEXT_CHARS, Vocabulary, salient_terms
from proctor.supervisor._goals import GoalSpan, goal_spans

DRIFT_RULE = "goal.drift"
DRIFT_VERSION = 1
DRIFT_STEPS = 8
"""Consecutive agent steps with no goal term that make drift."""
DRIFT_ANCHOR = 3
"""Steps sharing goal terms needed before them: the goal's terms must be visible at all."""
MIN_GOAL_TERMS = 2
"""Goals with fewer salient terms ("continue", "hi") cannot drift."""


def detect_goal_findings(trace: Trace, goals: Sequence[GoalVersion]) -> list[Finding]:
    """Every goal finding of a conversation trace, given its goal versions."""
    spans = goal_spans(trace, goals)
    findings = [finding for span in spans if (finding := _drift(trace, span)) is not None]
    findings += detect_context_loss(trace)
    findings += detect_unverified_completion(trace, spans)
    return findings


@dataclass(frozen=True, slots=True)
class _Step:
    event: Event
    terms: frozenset[str]


def _drift(trace: Trace, span: GoalSpan) -> Finding | None:
    """The first run of ``DRIFT_STEPS`` off-goal steps in the span of one open goal version."""
    if span.version.closed:
        return None
    vocabulary = Vocabulary(salient_terms(span.version.goal))
    if len(vocabulary) < MIN_GOAL_TERMS:
        return None
    anchors = 0
    off: list[_Step] = []
    for event in trace.events[span.start : span.end]:
        message = event.message
        if message is not None and message.role == "user" and message.kind == "prompt":
            # What the user asked for since the goal was set is on topic as well.
            vocabulary.add(salient_terms(message.text))
            continue
        step = _agent_step(event)
        if step is None:
            continue
        if vocabulary.shares(step.terms):
            anchors += 1
            off = []
            call = step.event.call
            if call is not None and call.result_text:
                # What an on-goal call brought back (the issue it showed, the file it read)
                # tells what the goal involves.
                vocabulary.add(salient_terms(call.result_text))
        elif anchors >= DRIFT_ANCHOR:
            off.append(step)
            if len(off) == DRIFT_STEPS:
                return _drift_finding(trace, span, off, anchors)
    return None


def _agent_step(event: Event) -> _Step | None:
    """A tool call (arguments, and its name) or a reply with salient terms; else None."""
    if event.kind == "call" and event.call is not None:
        text = " ".join(value for _, value in argument_strings(event.call.arguments))
        terms = salient_terms(text[:TEXT_CHARS])
        # The tool's name can tie a call to the goal ("github" issues), but a call whose
        # arguments say nothing ("Bash ls") is neutral, not off the goal.
        if terms:
            terms |= salient_terms(event.call.name)
    elif (
        event.message is not None
        and event.message.role == "assistant"
        and event.message.kind == "reply"
        and not event.message.derived
    ):
        terms = salient_terms(event.message.text)
    else:
        return None
    return _Step(event, terms) if terms else None


def _drift_finding(trace: Trace, span: GoalSpan, off: list[_Step], anchors: int) -> Finding:
    conversation_id = trace.context.conversation_id
    evidence: list[Evidence] = []
    if span.source is not None:
        evidence.append(cite_message(span.source))
    for step in off:
        call, message = step.event.call, step.event.message
        if call is not None:
            evidence.append(cite_call(call, "arguments", action_label(call)))
        elif message is not None:
            evidence.append(cite_message(message))
    title = f"Agent steps unrelated to goal version {span.version.version}"
    goal = " ".join(span.version.goal.split())
    return Finding(
        key=finding_key(DRIFT_RULE, conversation_id, evidence, title),
        conversation_id=conversation_id,
        origin="rule",
        rule=DRIFT_RULE,
        rule_version=DRIFT_VERSION,
        action="warn",
        category="goal_drift",
        severity="medium",
        title=title,
        content=(
            f"{len(off)} agent steps in a row share no term with the goal "
            f"(“{goal[:160]}”) or with what the user said since, after {anchors} steps "
            "that did. The agent may be working on something else."
        ),
        evidence=evidence,
        actual=len(off),
        threshold=DRIFT_STEPS,
        trigger_source_id=off[-1].event.source_id,
    )
