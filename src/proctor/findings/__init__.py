"""Findings: the shared output of deterministic rules and the model supervisor."""

from proctor.findings._key import finding_key, normalise_title
from proctor.findings._lifecycle import TRANSITIONS, check_transition
from proctor.findings._model import (
    SEVERITY_ORDER,
    Action,
    Category,
    Evidence,
    EvidenceTarget,
    Finding,
    Origin,
    Severity,
    Status,
)

__all__ = [
    "SEVERITY_ORDER",
    "TRANSITIONS",
    "Action",
    "Category",
    "Evidence",
    "EvidenceTarget",
    "Finding",
    "Origin",
    "Severity",
    "Status",
    "check_transition",
    "finding_key",
    "normalise_title",
]
