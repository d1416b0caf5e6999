"""The model caller: one resolved connection behind the pool, with MOD-4's rules.

Per call: wait for a pool slot (first in, first out), then run at most two attempts
under one stage timeout. An attempt that fails with 429, 5xx or a dropped connection is
retried once after 500 ms; nothing else is retried (capacity, auth, length, timeout,
bad requests). Cancellation propagates at once, also while the retry waits, so no
second request follows a cancelled call. Every attempt's usage, failed ones included, is
handed to the recorder before the call returns or raises.

The limits are copied into the caller when it is opened: a run keeps the limits it
started with even if the settings change while it runs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from proctor.errors import ModelError
from proctor.model_types import (
    AttemptUsage,
    ModelConnection,
    ModelRequest,
    ModelResponse,
    PoolLimits,
)
from proctor.models._attempt import AttemptProgress, ProviderAttempt
from proctor.models._guard import check_allowed
from proctor.models._pool import ModelPool

if TYPE_CHECKING:
    from proctor.store import ModelSettings

RETRY_DELAY_S = 0.5
"""Wait before the one retry of a transient failure (SPEC MOD-4)."""

UsageRecorder = Callable[[ModelConnection, ModelRequest, Sequence[AttemptUsage]], None]
"""Receives every call's attempts (failed ones too) once the call ends."""


@dataclass(frozen=True, slots=True)
class CallTiming:
    """The clock-related settings of a caller; tests shorten them, everything else uses ``of``."""

    stage_timeout_s: float
    retry_delay_s: float = RETRY_DELAY_S
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep

    @classmethod
    def of(cls, limits: PoolLimits) -> CallTiming:
        """The timing MOD-4 prescribes for ``limits``."""
        return cls(stage_timeout_s=limits.stage_timeout_s)


def store_recorder(store: ModelSettings) -> UsageRecorder:
    """A recorder writing every attempt to the store's ``model_calls``."""

    def record(
        connection: ModelConnection, request: ModelRequest, attempts: Sequence[AttemptUsage]
    ) -> None:
        store.record_model_attempts(
            connection,
            request.stage,
            attempts,
            target_id=request.target_id,
            run_id=request.run_id,
        )

    return record


def provider_attempt(connection: ModelConnection) -> ProviderAttempt:
    """The function that runs one attempt for the connection's provider (imported on use)."""
    if connection.provider == "openai":
        from proctor.models._openai import openai_attempt

        return openai_attempt
    if connection.provider == "anthropic":
        from proctor.models._anthropic import anthropic_attempt

        return anthropic_attempt
    from proctor.models._local import local_attempt

    return local_attempt


def endpoint(connection: ModelConnection) -> str:
    """Where the connection's requests go: a URL, or the GGUF file for local models."""
    if connection.provider == "openai":
        from proctor.models._openai import base_url

        return base_url(connection)
    if connection.provider == "anthropic":
        from proctor.models._anthropic import base_url as anthropic_base_url

        return anthropic_base_url(connection)
    return connection.path or ""


def _api_key(connection: ModelConnection) -> str | None:
    if connection.api_key_env is None:
        return None
    key = os.environ.get(connection.api_key_env)
    if not key:
        raise ModelError(
            "config",
            f"connection {connection.name!r} needs its key in the environment variable "
            f"{connection.api_key_env}, which is not set",
        )
    return key


def _redacted(error: ModelError, key: str | None) -> ModelError:
    message = str(error)
    if key and key in message:
        return ModelError(error.kind, message.replace(key, "[redacted]"), status=error.status)
    return error


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class PooledCaller:
    """A ``ModelCaller``: one connection, frozen limits, the pool, and the retry rules."""

    def __init__(
        self,
        connection: ModelConnection,
        limits: PoolLimits,
        *,
        pool: ModelPool,
        recorder: UsageRecorder | None,
        timing: CallTiming,
        attempt: ProviderAttempt,
    ) -> None:
        self._connection = connection
        self._limits = limits
        self._pool = pool
        self._recorder = recorder
        self._timing = timing
        self._attempt_once = attempt

    @property
    def connection(self) -> ModelConnection:
        """The connection resolved for this execution (SPEC MOD-3)."""
        return self._connection

    @property
    def limits(self) -> PoolLimits:
        """The limits frozen when this caller was opened."""
        return self._limits

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One strict-JSON call, with at most one retry on a transient failure."""
        if self._connection.provider != "local":
            check_allowed(endpoint(self._connection))
        key = _api_key(self._connection)
        attempts: list[AttemptUsage] = []
        try:
            async with self._pool.slot():
                with anyio.fail_after(self._timing.stage_timeout_s):
                    return await self._with_one_retry(request, key, attempts)
        except TimeoutError:
            if attempts and attempts[-1].outcome == "cancelled":  # the attempt the timeout ended
                attempts[-1] = _with_outcome(attempts[-1], "timeout")
            raise ModelError(
                "timeout",
                f"{self._connection.name!r} did not answer within the stage timeout of "
                f"{self._timing.stage_timeout_s:g} s",
            ) from None
        except ModelError as exc:
            raise _redacted(exc, key) from None
        finally:
            if attempts and self._recorder is not None:
                self._recorder(self._connection, request, tuple(attempts))

    async def _with_one_retry(
        self, request: ModelRequest, key: str | None, attempts: list[AttemptUsage]
    ) -> ModelResponse:
        try:
            return await self._attempt(request, key, attempts)
        except ModelError as exc:
            if not exc.retryable:
                raise
        await self._timing.sleep(self._timing.retry_delay_s)
        return await self._attempt(request, key, attempts)

    async def _attempt(
        self, request: ModelRequest, key: str | None, attempts: list[AttemptUsage]
    ) -> ModelResponse:
        number = len(attempts) + 1
        progress = AttemptProgress()
        started = time.monotonic()

        def used(outcome: str) -> AttemptUsage:
            seconds = time.monotonic() - started
            return AttemptUsage(
                number, progress.input_tokens, progress.output_tokens, outcome, seconds
            )

        try:
            await self._attempt_once(
                self._connection,
                request,
                progress,
                key=key,
                capacity_bytes=self._limits.capacity_kib * 1024,
            )
        except ModelError as exc:
            attempts.append(used(exc.kind))
            raise
        except Exception:
            attempts.append(used("error"))
            raise
        except BaseException:
            attempts.append(used("cancelled"))
            raise
        if progress.finish_reason == "length":
            attempts.append(used("length"))
            raise ModelError(
                "length",
                f"{self._connection.name!r} stopped at the output limit of "
                f"{request.max_output_tokens} tokens before finishing its answer",
            )
        attempts.append(used("ok"))
        return ModelResponse(
            data=_json_object(progress.text),
            text=progress.text,
            connection=self._connection.name,
            model=progress.model or self._connection.model,
            finish_reason=progress.finish_reason,
            attempts=tuple(attempts),
        )


def _with_outcome(attempt: AttemptUsage, outcome: str) -> AttemptUsage:
    return AttemptUsage(
        attempt.attempt, attempt.input_tokens, attempt.output_tokens, outcome, attempt.seconds
    )


def open_caller(
    connection: ModelConnection,
    *,
    limits: PoolLimits,
    recorder: UsageRecorder | None = None,
    pool: ModelPool | None = None,
) -> PooledCaller:
    """A caller for one execution: ``limits`` are frozen now, the pool is shared or new."""
    return PooledCaller(
        connection,
        limits,
        pool=pool if pool is not None else ModelPool(limits.concurrency),
        recorder=recorder,
        timing=CallTiming.of(limits),
        attempt=provider_attempt(connection),
    )
