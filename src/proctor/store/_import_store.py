"""Import rows: an import's start, its outcome, and imports whose process died (``interrupted``).

An import row names the process running it (host, id and, on Linux, boot id and start
time). A process killed mid-import (``kill -9``, a crash, a power cut) cannot finish its
row, so the next import looks at every row still ``running`` and marks those whose
process is gone ``interrupted``:

- SQLite (one host): the process is gone when its id is free, a zombie, from an earlier
  boot, or now another process (another start time). A row naming another host is left
  alone: there is no way to tell from here.
- PostgreSQL (any number of hosts): the importing process holds an advisory lock named
  after its import, on a connection of its own, until it records the outcome. The server
  drops the lock the moment that connection ends, so a row whose lock can be taken has
  no process behind it, whichever host ran it.

Rows written before the owner was recorded (migration 0011) are interrupted when found
running.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import insert, select, text, update
from sqlalchemy.engine import Connection, Row

from proctor._util.clock import utcnow
from proctor._util.process import ProcessIdentity, still_running, this_process
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._reader import import_record
from proctor.store._records import ImportRecord
from proctor.transcript import SourceIssue

INTERRUPTED = "interrupted"
"""The status of an import whose process stopped before it recorded an outcome."""

_LOCK_CLASS = 0x696D7074  # "impt": the first key of every import's advisory lock


def _lock_key(import_id: str) -> dict[str, int]:
    """The two 32-bit keys of an import's advisory lock (PostgreSQL)."""
    number = uuid.UUID(hex=import_id).int & 0xFFFFFFFF
    return {"kind": _LOCK_CLASS, "key": number - (1 << 31)}


@dataclass(slots=True)
class _Leases:
    """Open lease connections of this process's imports, by import id (PostgreSQL)."""

    held: dict[str, Connection]


class ImportRepository(Repository):
    """Import rows and the rule that finds interrupted imports (module docstring)."""

    _import_leases: _Leases | None = None

    def _leases(self) -> dict[str, Connection]:
        if self._import_leases is None:
            self._import_leases = _Leases({})
        return self._import_leases.held

    def begin_import(
        self, paths: Sequence[str], *, format_name: str | None, project: str | None
    ) -> str:
        """Record the start of an import by this process and return its id.

        On PostgreSQL the import's lease is taken first, so a row is never visible
        ``running`` without a live lease behind it; ``finish_import`` releases it.
        """
        import_id = uuid.uuid4().hex
        if self.dialect == "postgresql":
            self._take_lease(import_id)
        owner = this_process()
        try:
            with self._write() as c:
                c.execute(
                    insert(t.imports).values(
                        import_id=import_id,
                        started_at=utcnow(),
                        status="running",
                        paths=list(paths),
                        format=format_name,
                        project=project,
                        files=0,
                        conversations=0,
                        conversations_written=0,
                        sources_added=0,
                        sources_revised=0,
                        sources_unchanged=0,
                        redactions=0,
                        issues=0,
                        owner_host=owner.host,
                        owner_pid=owner.pid,
                        owner_start=owner.start,
                    )
                )
        except BaseException:
            self._release_lease(import_id)
            raise
        return import_id

    def finish_import(
        self, import_id: str, record: ImportRecord, issues: Sequence[SourceIssue]
    ) -> None:
        """Record the outcome and issues of an import, then release its lease."""
        try:
            with self._write() as c:
                c.execute(
                    update(t.imports)
                    .where(t.imports.c.import_id == import_id)
                    .values(
                        finished_at=utcnow(),
                        status=record.status,
                        files=record.files,
                        conversations=record.conversations,
                        conversations_written=record.conversations_written,
                        sources_added=record.sources_added,
                        sources_revised=record.sources_revised,
                        sources_unchanged=record.sources_unchanged,
                        redactions=record.redactions,
                        issues=len(issues),
                    )
                )
                if issues:
                    c.execute(
                        insert(t.import_issues),
                        [
                            {
                                "import_id": import_id,
                                "path": issue.path,
                                "line": issue.line,
                                "severity": issue.severity,
                                "reason": issue.reason,
                            }
                            for issue in issues
                        ],
                    )
        finally:
            self._release_lease(import_id)

    def mark_interrupted_imports(self) -> list[ImportRecord]:
        """Mark ``interrupted`` every running import whose process is gone; return them."""
        with self._read() as c:
            if (
                c.execute(
                    select(t.imports.c.import_id).where(t.imports.c.status == "running")
                ).first()
                is None
            ):
                return []  # the usual case: nothing to judge, no write
        with self._write() as c:
            running = c.execute(select(t.imports).where(t.imports.c.status == "running")).all()
            gone = [row for row in running if not self._alive(c, row)]
            for row in gone:
                c.execute(
                    update(t.imports)
                    .where(t.imports.c.import_id == row.import_id, t.imports.c.status == "running")
                    .values(status=INTERRUPTED)
                )
        return [replace(import_record(row), status=INTERRUPTED) for row in gone]

    def _alive(self, c: Connection, row: Row[Any]) -> bool:
        """Whether the process of a running import may still be at work."""
        if c.dialect.name == "postgresql":
            # Taken only for this transaction: a lock anyone can take has no holder.
            taken = c.execute(
                text("SELECT pg_try_advisory_xact_lock(:kind, :key)"), _lock_key(row.import_id)
            ).scalar_one()
            return not taken
        if row.owner_host is None or row.owner_pid is None:
            return False
        owner = ProcessIdentity(row.owner_host, row.owner_pid, row.owner_start)
        return still_running(owner) is not False

    def _take_lease(self, import_id: str) -> None:
        lease = self._writer.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            lease.execute(text("SELECT pg_advisory_lock(:kind, :key)"), _lock_key(import_id))
        except BaseException:
            lease.invalidate()
            lease.close()
            raise
        self._leases()[import_id] = lease

    def _release_lease(self, import_id: str) -> None:
        lease = self._leases().pop(import_id, None)
        if lease is None:
            return
        # Closing the server connection releases the lock, whatever state it is in.
        lease.invalidate()
        lease.close()
