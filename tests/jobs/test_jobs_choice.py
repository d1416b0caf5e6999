"""Where background work runs: the database decides, PROCTOR_JOBS may keep it in process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pytest

from proctor.errors import ConfigError
from proctor.jobs import JOBS_VARIABLE, uses_queue
from proctor.store import SqlStore


@dataclass
class _Store:
    dialect: str


def _on(dialect: str) -> SqlStore:
    return cast(SqlStore, _Store(dialect))


def test_postgresql_queues_and_sqlite_runs_in_process_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(JOBS_VARIABLE, raising=False)
    assert uses_queue(_on("postgresql")) is True
    assert uses_queue(_on("sqlite")) is False


def test_inprocess_keeps_work_here_on_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JOBS_VARIABLE, "inprocess")
    assert uses_queue(_on("postgresql")) is False
    monkeypatch.setenv(JOBS_VARIABLE, "Queue ")
    assert uses_queue(_on("postgresql")) is True


def test_a_queue_on_sqlite_and_unknown_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JOBS_VARIABLE, "queue")
    with pytest.raises(ConfigError, match="needs PostgreSQL"):
        uses_queue(_on("sqlite"))
    monkeypatch.setenv(JOBS_VARIABLE, "celery")
    with pytest.raises(ConfigError, match="`queue` or `inprocess`"):
        uses_queue(_on("postgresql"))
