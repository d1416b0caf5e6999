"""Model connections, requests and responses: what every model call in Proctor goes through.

A ``ModelConnection`` is a saved endpoint. Credentials are never stored: a connection
names the environment variable that holds its key. A ``ModelRequest`` asks for one strict
JSON answer matching a JSON Schema; a ``ModelResponse`` carries the parsed answer and the
usage of every attempt (SPEC MOD-1…MOD-4).

A leaf (it imports nothing from Proctor): the store reads and writes saved connections,
``proctor.models`` calls them, and both import these types from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

Provider = Literal["openai", "anthropic", "local"]
"""``openai``: any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp server, LM
Studio…); ``anthropic``: the Anthropic Messages API; ``local``: a GGUF file run in
process by llama-cpp-python."""

Stage = Literal[
    "supervise", "repair", "intent", "eval", "test", "review", "merge", "suggest", "discuss"
]
"""What a call is for; recorded with its usage."""


class ModelConnection(BaseModel):
    """A saved model endpoint. Never holds a secret: only the name of the variable that does."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """How the user refers to it (``proctor models …``)."""
    provider: Provider
    model: str = Field(min_length=1)
    """Model id at the provider, or a label for a local file."""
    base_url: str | None = None
    """Endpoint for ``openai`` (default ``https://api.openai.com/v1``) and ``anthropic``."""
    api_key_env: str | None = None
    """Environment variable holding the key (e.g. ``OPENAI_API_KEY``); unset for keyless servers."""
    path: str | None = None
    """GGUF file for ``local`` connections."""
    kind: Literal["text", "embedding"] = "text"
    """Only text models can supervise."""
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message sent to a model."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call: messages in, one JSON object matching ``json_schema`` out."""

    messages: tuple[ChatMessage, ...]
    json_schema: dict[str, Any]
    """The answer's JSON Schema; enforced by the provider's structured-output mode."""
    schema_name: str = "answer"
    stage: Stage = "supervise"
    max_output_tokens: int = 2048
    temperature: float = 0.0
    target_id: str | None = None
    """The conversation/task the call is about, recorded with its usage."""
    run_id: str | None = None
    """The supervision or eval run the call belongs to, recorded with its usage."""


@dataclass(frozen=True, slots=True)
class AttemptUsage:
    """Tokens of one attempt, as the provider reported them (None when it did not)."""

    attempt: int
    input_tokens: int | None
    output_tokens: int | None
    outcome: str
    """``ok`` or the error kind that ended the attempt."""
    seconds: float


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """The parsed answer and what it cost."""

    data: dict[str, Any] | None
    """The answer parsed as one JSON object; None when the text is not one (the caller
    validates, repairs once, or gives up)."""
    text: str
    connection: str
    model: str
    finish_reason: str | None
    attempts: tuple[AttemptUsage, ...] = field(default_factory=tuple)

    @property
    def input_tokens(self) -> int:
        """Input tokens over every attempt (unknown counts as 0)."""
        return sum(a.input_tokens or 0 for a in self.attempts)

    @property
    def output_tokens(self) -> int:
        """Output tokens over every attempt (unknown counts as 0)."""
        return sum(a.output_tokens or 0 for a in self.attempts)


@dataclass(frozen=True, slots=True)
class PoolLimits:
    """The pool's limits (SPEC MOD-4), frozen into every run when it starts."""

    concurrency: int = 1
    """Calls in flight at once, 1–4."""
    stage_timeout_s: float = 240.0
    """Wall-clock limit of one stage (all attempts of one call), 30–600 s."""
    capacity_kib: int = 1024
    """Largest response accepted while streaming, 100–16,384 KiB; beyond it the stream is
    aborted at once and the call fails without a retry."""

    def __post_init__(self) -> None:
        if not 1 <= self.concurrency <= 4:
            raise ValueError(f"concurrency must be 1–4, not {self.concurrency}")
        if not 30 <= self.stage_timeout_s <= 600:
            raise ValueError(f"stage timeout must be 30–600 s, not {self.stage_timeout_s}")
        if not 100 <= self.capacity_kib <= 16384:
            raise ValueError(f"response capacity must be 100–16,384 KiB, not {self.capacity_kib}")


class ModelCaller(Protocol):
    """What supervisor, intent and eval code call: one resolved connection behind the pool.

    ``complete`` returns when the provider finished normally (``finish_reason`` not
    ``length``); otherwise it raises ``ModelError`` with a ``kind`` (``config``, ``auth``,
    ``rejected``, ``rate_limited``, ``server``, ``connection``, ``timeout``, ``capacity``,
    ``length``, ``bad_response``). Cancellation (an anyio cancel scope) propagates as cancellation and
    always wins over a pending retry. Usage of every attempt is recorded by the caller.
    """

    @property
    def connection(self) -> ModelConnection:
        """The connection resolved for this execution (SPEC MOD-3)."""
        ...

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One strict-JSON call, with at most one retry on a transient failure."""
        ...
