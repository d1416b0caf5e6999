"""Turning validated decisions into findings: the same ``Finding`` type rules produce.

``continue`` decisions produce nothing. Each finding is ``origin="model"``, its rule is
``supervisor.<mode>`` and its rule version the prompt's version, and its key is the
shared finding key (rule, conversation, cited sources, normalised title), so running the
supervisor again over the same events updates a finding instead of duplicating it. A
task target's findings are keyed within the task. The model's action set has no pause or
stop (``Decision`` refuses them): only deterministic rules may pause.
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.findings import SEVERITY_ORDER, Finding, finding_key
from proctor.supervisor._decision import Decision, Mode
from proctor.supervisor._evidence import check_evidence
from proctor.supervisor._window_types import Window


def rule_id(mode: Mode) -> str:
    """The rule id model findings of ``mode`` carry."""
    return f"supervisor.{mode}"


def findings_from(
    decisions: Sequence[Decision], window: Window, mode: Mode, prompt_version: int
) -> tuple[Finding, ...]:
    """Findings for every decision that reports something, one per key (most severe kept)."""
    rule = rule_id(mode)
    scope = rule if window.target_type == "conversation" else f"{rule}|task:{window.target_id}"
    by_key: dict[str, Finding] = {}
    for decision in decisions:
        if decision.action == "continue":
            continue
        checked = check_evidence(decision, window)
        key = finding_key(scope, window.conversation_id, checked.evidence, decision.title)
        finding = Finding(
            key=key,
            conversation_id=window.conversation_id,
            origin="model",
            rule=rule,
            rule_version=prompt_version,
            action=decision.action,
            category=decision.category,
            severity=checked.severity,
            title=decision.title,
            content=_content(decision),
            evidence=list(checked.evidence),
            confidence=decision.confidence,
            speculative=checked.speculative,
        )
        earlier = by_key.get(key)
        if earlier is None or SEVERITY_ORDER[finding.severity] > SEVERITY_ORDER[earlier.severity]:
            by_key[key] = finding
    return tuple(by_key.values())


def _content(decision: Decision) -> str:
    if not decision.suggested_actions:
        return decision.content
    suggestions = "\n".join(f"- {action}" for action in decision.suggested_actions)
    return f"{decision.content}\n\nSuggested:\n{suggestions}".strip()
