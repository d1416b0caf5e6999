"""What the semantic layer takes and gives: limits, background notes, results, its error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from proctor.errors import ProctorError
from proctor.graph import BatchFacts, ExperienceFact, OpenItemFact, StoryLineFact

MAX_BACKGROUND = 4
"""Background notes given to one leaf call at most (REV-7b)."""
BACKGROUND_CHARS = 500
"""Characters of one background note at most (REV-7b)."""


@dataclass(frozen=True, slots=True)
class BackgroundNote:
    """A confirmed memory or a recent summary: context for the model, never evidence (REV-7b)."""

    text: str
    updated_at: datetime | None = None
    """When it was last updated, shown to the model so it can judge how current it is."""


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """How much of a batch one leaf call may see; long texts keep their head and tail."""

    message_chars: int = 3_000
    """One message's text."""
    argument_chars: int = 400
    """One tool call's arguments."""
    output_chars: int = 1_200
    """One tool call's output."""
    event_chars: int = 400
    """One task event's text."""
    sources_chars: int = 48_000
    """All source lines together: over it, the per-source limits shrink until it fits (or
    reach their floor), so a batch of 40 huge tool outputs stays bounded."""
    known_chars: int = 12_000
    """All ``known`` lines together at most; candidates past the budget are not offered
    (the least recent go first)."""
    known_share: float = 0.25
    """The known lines' budget as a share of the rendered sources' characters …"""
    known_min_chars: int = 3_000
    """… but never below this, nor above ``known_chars``."""
    known_description_chars: int = 160
    fact_chars: int = 160
    """One structural fact shown beside its source."""
    leaf_summary_chars: int = 1_200
    """One leaf's summary shown to the merge."""
    merge_events: int = 400
    """Events offered to the merge at most, in the order given."""
    merge_story_lines: int = 60
    """Existing story lines offered to the merge at most, in the order given."""

    def __post_init__(self) -> None:
        if self.sources_chars < 4_000:
            raise ValueError(f"a batch needs at least 4,000 characters, not {self.sources_chars}")


@dataclass(frozen=True, slots=True)
class LeafResult:
    """One batch's validated facts (semantic layer) and what the calls cost."""

    facts: BatchFacts
    calls: int
    """Model calls made, the repair call included."""
    input_tokens: int
    output_tokens: int
    prompt_chars: int = 0
    """Characters of the first request's messages (system prompt and data block)."""


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The review's navigation answer, mapped to facts (REV-9)."""

    summary: str
    change_digest: str
    story_lines: tuple[StoryLineFact, ...]
    experiences: tuple[ExperienceFact, ...]
    open_items: tuple[OpenItemFact, ...]
    calls: int
    input_tokens: int
    output_tokens: int
    prompt_chars: int = 0


class SemanticBatchError(ProctorError):
    """One leaf (or the merge) gave no valid answer: a failed batch, recorded, not a crash.

    ``reason`` is ``invalid_answer`` when the answer failed validation twice (the repair
    included) and ``model_error`` when the model could not be reached or answered out of
    bounds (timeout, capacity, length …). A broken setting is not this error: a
    ``ModelError`` of kind ``config`` propagates so the run fails loudly (SPEC MOD-2).
    """

    def __init__(
        self,
        message: str,
        *,
        batch_no: int | None,
        reason: Literal["invalid_answer", "model_error"],
        errors: Sequence[str] = (),
        calls: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> None:
        self.batch_no = batch_no
        """The failed batch; None for the merge."""
        self.reason = reason
        self.errors = tuple(errors)
        """What was wrong with the last answer (never quoting observed values)."""
        self.calls = calls
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        super().__init__(message)
