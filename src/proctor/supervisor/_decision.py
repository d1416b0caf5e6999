"""What the model supervisor answers (SPEC SUP-6): a list of decisions, strictly validated.

The JSON Schema given to the provider's structured-output mode is generated from these
models, so what the model is asked for and what Proctor accepts are one definition.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from proctor.findings import Category, Severity
from proctor.store import SupervisionMode

Mode = SupervisionMode
"""What the supervisor looks for (SPEC SUP-1); stored with each session and run."""

DecisionAction = Literal["continue", "comment", "warn", "request_review"]
"""The model may comment, warn or ask for review; only deterministic rules may pause."""


class Decision(BaseModel):
    """One judgement about the window."""

    model_config = ConfigDict(extra="forbid")

    action: DecisionAction
    category: Category
    severity: Severity
    title: str = Field(min_length=1, max_length=200)
    content: str = Field(max_length=4000)
    evidence: list[str] = Field(max_length=20)
    """Ids of messages / tool calls / task events in the window (as given to the model)."""
    confidence: float = Field(ge=0, le=1)
    suggested_actions: list[str] = Field(default_factory=list, max_length=5)


class SupervisorAnswer(BaseModel):
    """The whole answer: zero or more decisions."""

    model_config = ConfigDict(extra="forbid")

    decisions: list[Decision] = Field(max_length=12)


def answer_schema() -> dict[str, Any]:
    """The JSON Schema sent to the provider (strict: no extra keys anywhere)."""
    return SupervisorAnswer.model_json_schema()
