"""Wire documents of model connections: never a secret, at most where the key lives."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from proctor.api._base_models import WireModel
from proctor.models import ModelConnection, SupervisorChoice, endpoint, key_is_set


def public_endpoint(url: str) -> str:
    """``url`` without credentials: user info, query and fragment are dropped."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url  # a local model's file path
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class ConnectionView(WireModel):
    """A saved model connection as the API shows it: the key's variable name, never a key."""

    name: str
    provider: str
    model: str
    kind: Literal["text", "embedding"]
    endpoint: str
    """Where requests go (credentials and query removed), or the local model file."""
    key_env: str | None
    """The environment variable that holds the key (null: the endpoint needs none)."""
    has_key: bool
    """The server's environment holds a value for ``key_env`` (or no key is needed)."""
    default: bool
    """This is the default connection."""
    supervisor: bool
    """The model supervisor uses this connection now."""
    created_at: datetime | None

    @classmethod
    def of(
        cls, connection: ModelConnection, *, default: str | None, supervisor: str | None
    ) -> ConnectionView:
        """The public view of ``connection``."""
        return cls(
            name=connection.name,
            provider=connection.provider,
            model=connection.model,
            kind=connection.kind,
            endpoint=public_endpoint(endpoint(connection)),
            key_env=connection.api_key_env,
            has_key=key_is_set(connection),
            default=connection.name == default,
            supervisor=connection.name == supervisor,
            created_at=connection.created_at,
        )


class ConnectionList(WireModel):
    """Every connection, the default and the supervisor's choice."""

    default: str | None
    supervisor: SupervisorChoice
    connections: list[ConnectionView]


class SupervisorPin(BaseModel):
    """Pin the supervisor to a connection, or make it follow the default (null)."""

    model_config = ConfigDict(extra="forbid")

    connection: str | None = Field(
        min_length=1, max_length=80, description="A text connection's name; null: the default."
    )
