"""The one finding type shared by deterministic rules and (later) the model supervisor.

A finding is a judgement about one conversation that always cites where it comes from:
``Evidence`` points at a stored source (a message, a tool call, a task event), optionally
at a field and a character range inside it, or at the whole conversation when the point
is that something required never happened.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["info", "low", "medium", "high"]
"""How much a finding matters, lowest first."""

SEVERITY_ORDER: dict[Severity, int] = {"info": 0, "low": 1, "medium": 2, "high": 3}

Category = Literal[
    "goal_drift",
    "missing_requirement",
    "evidence_gap",
    "contradiction",
    "repetition",
    "quality",
    "risk",
    "budget",
]
"""What kind of problem (SPEC SUP-6); rules and the model supervisor share the set."""

Action = Literal["continue", "comment", "warn", "request_review", "pause", "stop"]
"""What the finding asks for. Only deterministic rules (or the user) may pause or stop."""

Status = Literal["open", "acknowledged", "resolved", "dismissed", "false_positive"]
"""Lifecycle: open → acknowledged → resolved | dismissed | false_positive (SPEC SUP-8)."""

Origin = Literal["rule", "model"]

EvidenceTarget = Literal["message", "tool_call", "task_event", "conversation"]


class Evidence(BaseModel):
    """A pointer from a finding back into the transcript."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source_type: EvidenceTarget
    """What ``source_id`` names; ``conversation`` means the whole target (an absence)."""
    source_id: str
    """Stable id of the source (or the conversation id for ``conversation``)."""
    field: str | None = None
    """Field inside the source, e.g. ``text``, ``result_text``, ``arguments.command``."""
    start: int | None = None
    """Start of the cited character range inside ``field``."""
    end: int | None = None
    """End (exclusive) of the cited character range inside ``field``."""
    excerpt: str | None = None
    """A short quote of the cited text, for display."""
    missing: str | None = None
    """For evidence of absence: the action or artifact that never happened."""

    def address(self) -> str:
        """A compact address such as ``tool_call cc:tool:x result_text:120-180``."""
        parts = [self.source_type, self.source_id]
        if self.field is not None:
            span = f":{self.start}-{self.end}" if self.start is not None else ""
            parts.append(f"{self.field}{span}")
        if self.missing is not None:
            parts.append(f"(missing: {self.missing})")
        return " ".join(parts)


class Finding(BaseModel):
    """One supervisor judgement about one conversation, with evidence."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """Stable across runs: the same rule over the same events gives the same key."""
    conversation_id: str
    """The supervised conversation."""
    origin: Origin = "rule"
    """Deterministic rule or model supervisor."""
    rule: str
    """Id of the rule (or supervisor prompt) that produced it."""
    rule_version: int
    """Version of that rule, bumped when its behaviour changes."""
    action: Action
    """What the finding asks for."""
    category: Category
    """What kind of problem."""
    severity: Severity
    """How much it matters."""
    title: str
    """One line."""
    content: str = ""
    """The explanation a user reads."""
    evidence: list[Evidence] = Field(default_factory=list)
    """Where it comes from; never empty for a rule finding."""
    confidence: float = 1.0
    """0–1; deterministic rules are certain of what they measured."""
    actual: Any = None
    """The measured value (a count, a ratio, a matched command)."""
    threshold: Any = None
    """The limit it was compared against, when there is one."""
    trigger_source_id: str | None = None
    """The event that made the rule fire."""
    speculative: bool = False
    """True when no evidence could be validated (model findings only)."""
    status: Status = "open"
    """Lifecycle status, set by the user."""
    digested: bool = False
    """Collapsed to one line in lists; persisted, reversible."""
    finding_id: str | None = None
    """Assigned by the store."""
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def notifies(self) -> bool:
        """Only review requests, high-severity warnings and pauses notify (SPEC SUP-8)."""
        return self.action in ("request_review", "pause", "stop") or (
            self.action == "warn" and self.severity == "high"
        )
