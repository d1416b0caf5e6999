"""What one attempt at a model call has received so far, and the shape of a provider.

A provider sends one request and fills an ``AttemptProgress`` as the answer streams in;
whatever usage the provider reported is kept even when the attempt then fails, so failed
attempts are recorded with the tokens they really cost (and ``None`` when unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from proctor.model_types import ModelConnection, ModelRequest


@dataclass(slots=True)
class AttemptProgress:
    """The answer text, finish reason and usage received so far in one attempt."""

    parts: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    """The provider's reason, with every "ran out of tokens" reason normalised to ``length``."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    """The model the provider says answered."""

    @property
    def text(self) -> str:
        """The answer text received so far."""
        return "".join(self.parts)


class ProviderAttempt(Protocol):
    """Sends one request and streams the answer into ``progress``; raises ``ModelError``."""

    async def __call__(
        self,
        connection: ModelConnection,
        request: ModelRequest,
        progress: AttemptProgress,
        *,
        key: str | None,
        capacity_bytes: int,
    ) -> None:
        """Run one attempt; return only when the provider finished the answer."""
        ...
