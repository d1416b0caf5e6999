"""Token usage from Codex ``token_count`` events, counted once per model response.

``token_count.info.total_token_usage`` is a cumulative snapshot of the whole session and
is often written twice in a row. The usage of one response is the difference between two
consecutive *distinct* snapshots; repeats are dropped, so the per-response usages add up
to the final total. A snapshot below its predecessor means the counter restarted (a new
process), and the snapshot itself is then the usage since the restart.

OpenAI counts cached input inside ``input_tokens`` and reasoning inside
``output_tokens``; ``Usage`` keeps cache reads apart, so they are split here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proctor.sources.codex._records import as_int
from proctor.transcript import Usage


@dataclass(frozen=True, slots=True)
class TokenTotals:
    """One token snapshot as Codex writes it (OpenAI semantics)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0

    @classmethod
    def from_json(cls, value: Any) -> TokenTotals | None:
        """Read a ``*_token_usage`` object; None when it is missing or not an object."""
        if not isinstance(value, dict):
            return None
        return cls(
            as_int(value.get("input_tokens")) or 0,
            as_int(value.get("cached_input_tokens")) or 0,
            as_int(value.get("output_tokens")) or 0,
            as_int(value.get("reasoning_output_tokens")) or 0,
        )

    def minus(self, earlier: TokenTotals) -> TokenTotals:
        """The tokens added since ``earlier``."""
        return TokenTotals(
            self.input_tokens - earlier.input_tokens,
            self.cached_input_tokens - earlier.cached_input_tokens,
            self.output_tokens - earlier.output_tokens,
            self.reasoning_output_tokens - earlier.reasoning_output_tokens,
        )

    def is_below(self, earlier: TokenTotals) -> bool:
        """True when any counter went down, i.e. the cumulative count restarted."""
        return (
            self.input_tokens < earlier.input_tokens
            or self.cached_input_tokens < earlier.cached_input_tokens
            or self.output_tokens < earlier.output_tokens
            or self.reasoning_output_tokens < earlier.reasoning_output_tokens
        )

    def to_usage(self) -> Usage:
        """As a ``Usage``: uncached input and cache reads apart, reasoning kept as a count."""
        cached = min(self.cached_input_tokens, self.input_tokens)
        return Usage(
            input_tokens=self.input_tokens - cached,
            output_tokens=self.output_tokens,
            cache_read_tokens=cached,
            reasoning_tokens=self.reasoning_output_tokens,
        )


class TokenMeter:
    """Turns the stream of cumulative snapshots of one session into per-response usage."""

    def __init__(self) -> None:
        self._last: TokenTotals | None = None
        self.responses = 0
        """Distinct snapshots seen: one per model response."""
        self.duplicates = 0
        """Snapshots dropped because they repeated the previous total."""
        self.restarts = 0
        self.total = Usage()
        """Sum of every usage handed out."""
        self.context_window: int | None = None

    def observe(self, info: Any) -> Usage | None:
        """The usage of the response this ``token_count.info`` reports, or None for a repeat."""
        if not isinstance(info, dict):
            return None  # `info: null` carries only rate limits
        window = as_int(info.get("model_context_window"))
        if window:
            self.context_window = window
        total = TokenTotals.from_json(info.get("total_token_usage"))
        if total is None:
            # No cumulative snapshot: the per-response figure is all there is.
            last = TokenTotals.from_json(info.get("last_token_usage"))
            return None if last is None else self._count(last.to_usage())
        if total == self._last:
            self.duplicates += 1
            return None
        if self._last is None:
            added = total
        elif total.is_below(self._last):
            self.restarts += 1
            added = total
        else:
            added = total.minus(self._last)
        self._last = total
        return self._count(added.to_usage())

    def _count(self, usage: Usage) -> Usage:
        self.responses += 1
        self.total = self.total + usage
        return usage
