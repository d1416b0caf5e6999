"""Model connections, requests and responses: what every model call in Proctor goes through.

A ``ModelConnection`` is a saved endpoint. Credentials are never stored: a connection
names the environment variable that holds its key. A ``ModelRequest`` asks for one strict
JSON answer matching a JSON Schema; a ``ModelResponse`` carries the parsed answer and the
usage of every attempt (SPEC MOD-1…MOD-4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Provider = Literal["openai", "anthropic", "local"]
"""``openai``: any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp server, LM
Studio…); ``anthropic``: the Anthropic Messages API; ``local``: a GGUF file run in
process by llama-cpp-python."""

Stage = Literal["supervise", "repair", "intent", "eval", "test", "review", "merge", "suggest"]
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

    data: dict[str, Any]
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
