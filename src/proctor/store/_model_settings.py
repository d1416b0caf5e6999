"""Settings, saved model connections and the usage of every model call (SPEC MOD-1…4).

Connections never hold a secret, only the name of the environment variable that does.
Usage is stored one row per attempt with the tokens the provider reported; an attempt the
provider gave no usage for keeps ``NULL`` and is counted as unknown, never estimated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import delete, func, insert, or_, select
from sqlalchemy.engine import RowMapping
from sqlalchemy.sql.elements import ColumnElement

from proctor._util.clock import utcnow
from proctor.store import _schema as t
from proctor.store._base import Repository

if TYPE_CHECKING:
    from proctor.model_types import AttemptUsage, ModelConnection


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Recorded model attempts and the tokens their providers reported."""

    calls: int
    """Attempts sent to a provider (a retried call counts twice)."""
    input_tokens: int
    """Input tokens over the attempts whose provider reported them."""
    output_tokens: int
    """Output tokens over the attempts whose provider reported them."""
    unknown_usage: int
    """Attempts without reported input or output tokens (not estimated)."""


class ModelSettingsReader(Protocol):
    """What the model layer reads of the store: settings, connections and usage."""

    def connection(self, name: str) -> ModelConnection | None:
        """One saved connection, or None."""
        ...

    def list_connections(self) -> list[ModelConnection]:
        """Every saved connection, by name."""
        ...

    def get_setting(self, key: str) -> Any | None:
        """A setting's JSON value, or None when unset."""
        ...

    def model_usage(
        self,
        *,
        target_id: str | None = None,
        run_id: str | None = None,
        since: datetime | None = None,
    ) -> ModelUsage:
        """Usage recorded for a target, a run and/or since a time."""
        ...


class ModelSettings(ModelSettingsReader, Protocol):
    """What the model layer needs from the store: ``ModelSettingsReader`` and the writes."""

    def save_connection(self, connection: ModelConnection) -> None:
        """Insert or replace a connection by name."""
        ...

    def delete_connection(self, name: str) -> bool:
        """Delete a connection; False when there was none of that name."""
        ...

    def set_setting(self, key: str, value: Any) -> None:
        """Store a setting's JSON value; None removes it."""
        ...

    def record_model_attempts(
        self,
        connection: ModelConnection,
        request_stage: str,
        attempts: Sequence[AttemptUsage],
        *,
        target_id: str | None,
        run_id: str | None,
    ) -> None:
        """Store one usage row per attempt."""
        ...


def _connection(row: RowMapping) -> ModelConnection:
    from proctor.model_types import ModelConnection

    return ModelConnection.model_validate(dict(row))


class ModelSettingsReads(Repository):
    """Settings, saved model connections and the usage of every model call: the reads."""

    def connection(self, name: str) -> ModelConnection | None:
        """One saved connection, or None."""
        with self._read() as c:
            row = (
                c.execute(select(t.model_connections).where(t.model_connections.c.name == name))
                .mappings()
                .first()
            )
        return None if row is None else _connection(row)

    def list_connections(self) -> list[ModelConnection]:
        """Every saved connection, by name."""
        with self._read() as c:
            rows = c.execute(select(t.model_connections).order_by(t.model_connections.c.name))
            return [_connection(row) for row in rows.mappings()]

    def get_setting(self, key: str) -> Any | None:
        """A setting's JSON value, or None when unset."""
        with self._read() as c:
            return c.execute(
                select(t.settings.c.value).where(t.settings.c.key == key)
            ).scalar_one_or_none()

    def model_usage(
        self,
        *,
        target_id: str | None = None,
        run_id: str | None = None,
        since: datetime | None = None,
    ) -> ModelUsage:
        """Usage recorded for a target, a run and/or since a time (all of them when none given)."""
        calls = t.model_calls.c
        conditions: list[ColumnElement[bool]] = []
        if target_id is not None:
            conditions.append(calls.target_id == target_id)
        if run_id is not None:
            conditions.append(calls.run_id == run_id)
        if since is not None:
            conditions.append(calls.created_at >= since)
        unknown = func.count().filter(
            or_(calls.input_tokens.is_(None), calls.output_tokens.is_(None))
        )
        query = select(
            func.count(),
            func.coalesce(func.sum(calls.input_tokens), 0),
            func.coalesce(func.sum(calls.output_tokens), 0),
            unknown,
        ).where(*conditions)
        with self._read() as c:
            count, input_tokens, output_tokens, unknown_count = c.execute(query).one()
        return ModelUsage(int(count), int(input_tokens), int(output_tokens), int(unknown_count))


class ModelSettingsRepository(ModelSettingsReads):
    """``ModelSettingsReads`` and the writes (saving connections and settings, recording model attempts), each one transaction."""

    def save_connection(self, connection: ModelConnection) -> None:
        """Insert or replace a connection by name (its creation time is now when unset)."""
        values = connection.model_dump()
        values["created_at"] = connection.created_at or utcnow()
        with self._write() as c:
            c.execute(
                delete(t.model_connections).where(t.model_connections.c.name == connection.name)
            )
            c.execute(insert(t.model_connections).values(**values))

    def delete_connection(self, name: str) -> bool:
        """Delete a connection; False when there was none of that name."""
        with self._write() as c:
            result = c.execute(
                delete(t.model_connections).where(t.model_connections.c.name == name)
            )
            return result.rowcount > 0

    def set_setting(self, key: str, value: Any) -> None:
        """Store a setting's JSON value; None removes it."""
        with self._write() as c:
            c.execute(delete(t.settings).where(t.settings.c.key == key))
            if value is not None:
                c.execute(insert(t.settings).values(key=key, value=value, updated_at=utcnow()))

    def record_model_attempts(
        self,
        connection: ModelConnection,
        request_stage: str,
        attempts: Sequence[AttemptUsage],
        *,
        target_id: str | None,
        run_id: str | None,
    ) -> None:
        """Store one usage row per attempt, failed attempts included."""
        if not attempts:
            return
        now = utcnow()
        rows = [
            {
                "connection": connection.name,
                "model": connection.model,
                "stage": request_stage,
                "attempt": attempt.attempt,
                "outcome": attempt.outcome,
                "input_tokens": attempt.input_tokens,
                "output_tokens": attempt.output_tokens,
                "seconds": attempt.seconds,
                "target_id": target_id,
                "run_id": run_id,
                "created_at": now,
            }
            for attempt in attempts
        ]
        with self._write() as c:
            c.execute(insert(t.model_calls), rows)
