"""``proctor check``: run the deterministic rules over stored conversations.

Each conversation (sub-agent conversations included) is checked on its own trace with
the policy that applies to it and by the goal detectors, and the findings are recorded by
key: re-running over the same events updates findings instead of duplicating them.

Goal tracking runs first (GOAL-1, GOAL-2): when no supervisor model connection is usable,
the user turns not labelled yet get the lexical classifier and the goal versions they
create are recorded, so a person who never adds a model still sees the goal and its
changes, and the goal detectors have versions to check against. With a usable model the
labelling is left to model supervision in ``goal`` mode (a lexical label would stand in
for the model's: a turn is labelled once). Re-checking records no version or label twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from proctor.findings import Finding
from proctor.gate import stored_trace
from proctor.models import supervisor_choice
from proctor.rules import Policy, check_trace, find_policy, load_policy
from proctor.store import RecordOutcome, Store
from proctor.supervisor import detect_goal_findings, track_goals_lexically


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The findings of one conversation and what recording them changed."""

    conversation_id: str
    findings: tuple[Finding, ...]
    outcome: RecordOutcome
    policy_source: str | None
    goal_versions: int = 0
    """Goal versions recorded by this check (the conversation's and its tasks')."""


def _with_children(store: Store, conversation_ids: Sequence[str]) -> list[str]:
    ordered: list[str] = []
    pending = list(conversation_ids)
    while pending:
        conversation_id = pending.pop(0)
        if conversation_id in ordered:
            continue
        ordered.append(conversation_id)
        pending.extend(
            child.conversation_id for child in store.transcript(conversation_id).children
        )
    return ordered


def check_conversations(
    store: Store,
    conversation_ids: Sequence[str],
    *,
    policy_path: Path | None = None,
    include_children: bool = True,
) -> list[CheckResult]:
    """Check conversations (and their sub-agents) and record the findings."""
    explicit: Policy | None = load_policy(policy_path) if policy_path is not None else None
    ids = _with_children(store, conversation_ids) if include_children else list(conversation_ids)
    results: list[CheckResult] = []
    lexical_goals = supervisor_choice(store).connection is None
    for conversation_id in ids:
        recorded = 0
        if lexical_goals:
            recorded = len(track_goals_lexically(store, conversation_id).recorded)
        transcript = store.transcript(conversation_id)
        trace = stored_trace(transcript)
        policy = explicit or find_policy(cwd=trace.context.cwd, project=trace.context.project)
        found = check_trace(trace, policy)
        found += detect_goal_findings(trace, store.goal_versions(conversation_id))
        outcome = store.record_findings(found)
        results.append(CheckResult(conversation_id, tuple(found), outcome, policy.source, recorded))
    return results
