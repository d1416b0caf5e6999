"""An import's writes, many read units to one transaction (SPEC ING-9, STO-3).

A file import writes each conversation and then the record of the unit it came from.
Committing each of those on its own costs more than writing them: every commit writes
the pages it touched again (the same index pages, conversation after conversation).
``ImportBatch`` writes them inside one transaction of the caller's choosing, each
conversation inside a savepoint of its own, so:

- a conversation the database refuses (a constraint) is rolled back to its savepoint
  and reported, exactly as when it had a transaction of its own; the others stay;
- a process killed mid-batch leaves every conversation of the batch fully old, and a
  unit's record is never committed without its conversations (nor they without it).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from proctor._util.clock import utcnow
from proctor.errors import ConversationWriteError
from proctor.store import _schema as t
from proctor.store._bulk import direct_writes, insert_rows, run_driver
from proctor.store._records import ImportedFile, WriteOutcome
from proctor.store._rows import ConversationRows, conversation_rows
from proctor.store._writer import write_rows
from proctor.transcript import Conversation, PreparedBundle

_SAVEPOINT = "proctor_conversation"
_CHUNK = 400  # paths per IN (...) clause

ProjectFor = Callable[[Connection, Conversation], str]
"""The project a conversation goes to when the import names none."""


def store_imported_file(connection: Connection, imported: ImportedFile, now: datetime) -> None:
    """Remember, inside the caller's transaction, that a read unit was imported."""
    connection.execute(delete(t.import_files).where(t.import_files.c.path == imported.path))
    connection.execute(
        insert(t.import_files).values(
            path=imported.path,
            content_hash=imported.content_hash,
            size=imported.size,
            adapter=imported.adapter,
            adapter_version=imported.adapter_version,
            conversation_ids=list(imported.conversation_ids),
            imported_at=now,
        )
    )


class ImportBatch:
    """Writes of an import inside one open transaction (module docstring)."""

    def __init__(self, connection: Connection, project_for: ProjectFor) -> None:
        self._connection = connection
        self._project_for = project_for
        self.sources = 0
        """Sources of the conversations written so far: how much the batch holds."""
        self._projects: dict[str, str] = {}
        """Project ids by name, looked up (or created) once per transaction."""
        self._files: dict[str, dict[str, Any]] = {}
        """Unit records to write before the batch commits, by path."""

    def write_conversation(
        self, prepared: PreparedBundle, *, project: str | None = None
    ) -> WriteOutcome:
        """Write one conversation in a savepoint; unchanged sources are not written.

        Raises:
            ConversationWriteError: the database refused it; nothing of it was written.
        """
        return self.write_rows(conversation_rows(prepared), project=project)

    def write_rows(self, rows: ConversationRows, *, project: str | None = None) -> WriteOutcome:
        """``write_conversation`` of a conversation's rows (``conversation_rows``: what
        an import's worker processes send)."""
        with direct_writes():
            return self._write(rows, project)

    def _write(self, rows: ConversationRows, project: str | None) -> WriteOutcome:
        connection = self._connection
        # The savepoint by its SQL on the driver's cursor (``begin_nested`` compiles a
        # clause for each, ``exec_driver_sql`` builds an execution context).
        run_driver(connection, f"SAVEPOINT {_SAVEPOINT}")
        try:
            name = project or self._project_for(connection, rows.conversation)
            outcome = write_rows(connection, rows, name, utcnow(), projects=self._projects)
        except BaseException as exc:
            run_driver(connection, f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
            run_driver(connection, f"RELEASE SAVEPOINT {_SAVEPOINT}")
            self._projects.clear()  # one created in the savepoint is gone with it
            if isinstance(exc, IntegrityError):
                raise ConversationWriteError(
                    f"conversation {rows.conversation_id!r} could not be stored: "
                    f"the write was refused and rolled back ({exc.orig}); "
                    "nothing of it was stored"
                ) from exc
            raise
        run_driver(connection, f"RELEASE SAVEPOINT {_SAVEPOINT}")
        self.sources += len(rows.sources)
        return outcome

    def record_imported_file(self, imported: ImportedFile) -> None:
        """Remember that a read unit was imported with this content (written with the
        batch's other records by ``finish``, in the same transaction)."""
        self._files[imported.path] = {
            "path": imported.path,
            "content_hash": imported.content_hash,
            "size": imported.size,
            "adapter": imported.adapter,
            "adapter_version": imported.adapter_version,
            "conversation_ids": list(imported.conversation_ids),
            "imported_at": utcnow(),
        }

    def finish(self) -> None:
        """Write the unit records held back (one delete and one insert per chunk); the
        caller commits next."""
        paths = list(self._files)
        connection = self._connection
        for start in range(0, len(paths), _CHUNK):
            chunk = paths[start : start + _CHUNK]
            connection.execute(delete(t.import_files).where(t.import_files.c.path.in_(chunk)))
        with direct_writes():
            insert_rows(connection, t.import_files, list(self._files.values()))
        self._files.clear()
