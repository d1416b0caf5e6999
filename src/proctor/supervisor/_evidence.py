"""Re-validating the evidence a model cites (SPEC SUP-7).

A model may cite only what it was shown: every evidence id must be a window id of this
window; anything else (an id from another window, a stored source id, an invented id) is
dropped. ``target`` — the whole target — is accepted only where it can mean "this never
happened": for ``missing_requirement`` and ``evidence_gap`` decisions, with the missing
action taken from the decision's title. A decision left with no valid evidence is
speculative, and its severity is capped at ``low``.
"""

from __future__ import annotations

from dataclasses import dataclass

from proctor.findings import SEVERITY_ORDER, Evidence, Severity
from proctor.supervisor._decision import Decision
from proctor.supervisor._window_types import TARGET_ID, Window

ABSENCE_CATEGORIES = frozenset({"missing_requirement", "evidence_gap"})
"""Categories whose point can be that something never happened."""
SPECULATIVE_CAP: Severity = "low"


@dataclass(frozen=True, slots=True)
class CheckedEvidence:
    """A decision's evidence after re-validation."""

    evidence: tuple[Evidence, ...]
    dropped: tuple[str, ...]
    """Cited ids that were not accepted."""
    severity: Severity
    """The decision's severity, capped when nothing valid is left."""

    @property
    def speculative(self) -> bool:
        """True when no cited id could be validated."""
        return not self.evidence


def check_evidence(decision: Decision, window: Window) -> CheckedEvidence:
    """Keep the ids that name something in ``window``; cap the severity when none is left."""
    kept: list[Evidence] = []
    dropped: list[str] = []
    for window_id in dict.fromkeys(decision.evidence):
        evidence = window.evidence_map.get(window_id)
        if window_id == TARGET_ID:
            if evidence is None or decision.category not in ABSENCE_CATEGORIES:
                evidence = None
            else:
                evidence = evidence.model_copy(update={"missing": decision.title})
        if evidence is None:
            dropped.append(window_id)
        else:
            kept.append(evidence)
    severity: Severity = decision.severity
    if not kept and SEVERITY_ORDER[severity] > SEVERITY_ORDER[SPECULATIVE_CAP]:
        severity = SPECULATIVE_CAP
    return CheckedEvidence(tuple(kept), tuple(dropped), severity)
