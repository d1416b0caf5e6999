"""Requests, callers and a recorder shared by the model tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio

from proctor.models import (
    AttemptUsage,
    ChatMessage,
    ModelConnection,
    ModelPool,
    ModelRequest,
    ModelResponse,
    PoolLimits,
)
from proctor.models._caller import CallTiming, PooledCaller, provider_attempt

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


def ask(text: str = "Is this fine?", **options: object) -> ModelRequest:
    """A small request with a system and a user message."""
    fields: dict[str, object] = {"json_schema": ANSWER_SCHEMA, **options}
    return ModelRequest(
        messages=(ChatMessage("system", "Answer in JSON."), ChatMessage("user", text)),
        **fields,  # type: ignore[arg-type]
    )


@dataclass
class RecordedCalls:
    """A usage recorder that keeps what it was given."""

    calls: list[tuple[str, ModelRequest, tuple[AttemptUsage, ...]]] = field(default_factory=list)

    def __call__(
        self, connection: ModelConnection, request: ModelRequest, attempts: Sequence[AttemptUsage]
    ) -> None:
        self.calls.append((connection.name, request, tuple(attempts)))

    @property
    def outcomes(self) -> list[str]:
        """The outcome of every recorded attempt, in order."""
        return [a.outcome for _, _, attempts in self.calls for a in attempts]


def fast_caller(
    connection: ModelConnection,
    *,
    limits: PoolLimits | None = None,
    recorder: RecordedCalls | None = None,
    stage_timeout_s: float = 30.0,
    retry_delay_s: float = 0.01,
    pool: ModelPool | None = None,
) -> PooledCaller:
    """A caller with MOD-4's rules but shortened waits, for tests that are not about them."""
    chosen = limits or PoolLimits()
    return PooledCaller(
        connection,
        chosen,
        pool=pool or ModelPool(chosen.concurrency),
        recorder=recorder,
        timing=CallTiming(stage_timeout_s=stage_timeout_s, retry_delay_s=retry_delay_s),
        attempt=provider_attempt(connection),
    )


def complete(caller: PooledCaller, request: ModelRequest | None = None) -> ModelResponse:
    """Run one call in its own event loop."""
    return anyio.run(caller.complete, request or ask())
