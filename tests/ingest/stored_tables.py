"""Every row an import stores, as the database holds it, for comparing two imports.

Values are read raw (SQLite's text for times and JSON, PostgreSQL's as the driver gives
them), so two dumps are equal only when the stored bytes are. What differs by nature
between two imports of the same files is left out: the clock (``imported_at``,
``updated_at``, ``first_seen_at``, ``recorded_at``, an import's own times), random ids
(a project's id is shown by its name, an import's by its order; a conversation's
``header_hash`` covers its project's id) and the importing process.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy import text

from tests.backends import raw_connection

Dump = dict[str, list[tuple[object, ...]]]

QUERIES = {
    "projects": "SELECT name, status FROM projects ORDER BY name",
    "conversations": "SELECT c.conversation_id, p.name, c.format, c.external_id, c.kind, "
    "c.parent_conversation_id, c.title, c.cwd, c.model, c.started_at, c.ended_at, c.origin, "
    "c.attributes, c.redactions FROM conversations c "
    "JOIN projects p ON p.project_id = c.project_id ORDER BY c.conversation_id",
    "sources": "SELECT source_type, source_id, conversation_id, fingerprint, content_hash, "
    "revision, redactions, occurred_at FROM sources ORDER BY source_type, source_id",
    "source_versions": "SELECT source_type, source_id, revision, fingerprint "
    "FROM source_versions ORDER BY source_type, source_id, revision",
    "messages": "SELECT * FROM messages ORDER BY source_id",
    "tool_calls": "SELECT * FROM tool_calls ORDER BY source_id",
    "tasks": "SELECT * FROM tasks ORDER BY task_id",
    "task_events": "SELECT * FROM task_events ORDER BY source_id",
    "subagent_runs": "SELECT * FROM subagent_runs ORDER BY conversation_id",
    "import_files": "SELECT path, content_hash, size, adapter, adapter_version, "
    "conversation_ids FROM import_files ORDER BY path",
    "import_issues": "SELECT path, line, severity, reason FROM import_issues ORDER BY issue_id",
    "imports": "SELECT status, paths, format, project, files, conversations, "
    "conversations_written, sources_added, sources_revised, sources_unchanged, redactions, "
    "issues FROM imports ORDER BY started_at",
}


def stored_tables(db: Path) -> Dump:
    """Every stored row of the import tables of the store at ``db`` (module docstring)."""
    with raw_connection(db, read_only=True) as connection:
        return {
            table: [tuple(row) for row in connection.execute(text(query))]
            for table, query in QUERIES.items()
        }


def digest(dump: Dump) -> dict[str, str]:
    """A short hash of each table's rows, to name which table differs."""
    return {
        table: hashlib.blake2b(repr(rows).encode(), digest_size=8).hexdigest()
        for table, rows in dump.items()
    }
