"""The whole re-merge an incremental append must agree with, and a dump to compare stores.

``WholeMergeIntake`` is intake as it was before appends read excerpts: every touched
conversation is read whole (``Store.transcript``), merged whole, and written through the
file-import path (``write_conversations``: each source at its index). ``stored_rows``
dumps everything a store holds for some conversations, without the columns that differ
between two stores written at different times (write times, project uuids, and the
header hash, which hashes the project uuid).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.engine import Connection

from proctor.ingest import Intake
from proctor.ingest._intake_merge import whole_excerpt
from proctor.store import ExcerptRequest, PlacedBundle, SqlStore, TranscriptExcerpt, WriteOutcome
from proctor.store import _schema as t
from tests.backends import raw_connection

_LEFT_OUT = {"imported_at", "updated_at", "first_seen_at", "recorded_at", "header_hash"}


class WholeMergeIntake(Intake):
    """Intake that reads and writes every touched conversation whole."""

    def _excerpts(self, wanted: Mapping[str, ExcerptRequest]) -> dict[str, TranscriptExcerpt]:
        stored = self.store.existing_conversation_ids(list(wanted))
        return {cid: whole_excerpt(self.store.transcript(cid)) for cid in wanted if cid in stored}

    def _write(self, placed: Sequence[PlacedBundle], project: str | None) -> list[WriteOutcome]:
        return self.store.write_conversations([p.prepared for p in placed], project=project)


def stored_rows(database: Path | SqlStore, conversation_ids: Sequence[str]) -> dict[str, list[Any]]:
    """Every row the store holds for ``conversation_ids``, table by table, in key order.

    ``database``: the store's path, or an open store (read through its own connection).
    """
    if isinstance(database, SqlStore):
        with database._read() as connection:
            return _dump(connection, conversation_ids)
    with raw_connection(database, read_only=True) as connection:
        return _dump(connection, conversation_ids)


def _dump(connection: Connection, conversation_ids: Sequence[str]) -> dict[str, list[Any]]:
    ids = list(conversation_ids)
    dumped: dict[str, list[Any]] = {}

    def rows(table: Table, query: Any) -> list[Any]:
        keep = [c for c in table.c if c.name not in _LEFT_OUT]
        ordered = query.with_only_columns(*keep).order_by(*table.primary_key.columns)
        return [tuple(row) for row in connection.execute(ordered)]

    header = [c for c in t.conversations.c if c.name not in _LEFT_OUT | {"project_id"}]
    conversations = (
        select(*header, t.projects.c.name)
        .join(t.projects, t.projects.c.project_id == t.conversations.c.project_id)
        .where(t.conversations.c.conversation_id.in_(ids))
        .order_by(t.conversations.c.conversation_id)
    )
    dumped["conversations"] = [tuple(row) for row in connection.execute(conversations)]
    for table in (
        t.sources,
        t.messages,
        t.tool_calls,
        t.tasks,
        t.task_events,
        t.subagent_runs,
    ):
        dumped[table.name] = rows(table, select(table).where(table.c.conversation_id.in_(ids)))
    mine = select(t.sources.c.source_id).where(t.sources.c.conversation_id.in_(ids))
    dumped["source_versions"] = rows(
        t.source_versions,
        select(t.source_versions).where(t.source_versions.c.source_id.in_(mine)),
    )
    return dumped
