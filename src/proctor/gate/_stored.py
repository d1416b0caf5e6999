"""The stored conversation read with ``sqlite3`` alone, for the hook deciding by itself.

``proctor gate`` runs before every tool call; importing SQLAlchemy and the store costs it
more than everything else it does. On the SQLite backend (no ``PROCTOR_DATABASE_URL``)
the hook reads the one conversation it needs straight from ``$PROCTOR_HOME/proctor.db``,
opened read-only (``mode=ro``), with the columns and conversions of ``store._rows`` and
``store._schema``: ``UTCDateTime`` is ISO text in UTC, ``JSON`` is JSON text. The result
is the trace ``stored_trace(store.transcript(…))`` gives (``tests/gate/test_stored.py``
holds the two equal on real imported sessions). On PostgreSQL the store is used.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from proctor.rules import Trace, TraceContext
from proctor.transcript import Message, ToolCall, Usage

DATABASE_URL_VARIABLE = "PROCTOR_DATABASE_URL"
"""As ``proctor.store.DATABASE_URL_VARIABLE`` (not imported: it would import SQLAlchemy)."""

_CONVERSATION = """
SELECT c.format, c.cwd, c.started_at, c.kind, p.name
FROM conversations AS c JOIN projects AS p ON p.project_id = c.project_id
WHERE c.conversation_id = ?
"""
_MESSAGES = """
SELECT source_id, role, kind, text, created_at, parent_source_id, on_active_branch, derived,
       author, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
       reasoning_tokens, attributes
FROM messages WHERE conversation_id = ? ORDER BY seq
"""
_TOOL_CALLS = """
SELECT source_id, name, arguments, call_id, message_source_id, status, result_text,
       result_size, exit_code, created_at, completed_at, on_active_branch, attributes
FROM tool_calls WHERE conversation_id = ? ORDER BY seq
"""


def sqlite_database() -> Path | None:
    """The SQLite store file when that is the backend and it exists; else None."""
    if os.environ.get(DATABASE_URL_VARIABLE, "").strip():
        return None  # PostgreSQL (or another URL): the store reads it
    from proctor._util.paths import database_path

    path = database_path()
    return path if path.is_file() else None


def no_database() -> bool:
    """Whether nothing is stored yet: the SQLite backend and no file (``database_exists``).

    A process that has imported the store already asks the store's own ``database_exists``.
    """
    store = sys.modules.get("proctor.store")
    if store is not None:
        return not store.database_exists()
    if os.environ.get(DATABASE_URL_VARIABLE, "").strip():
        return False
    from proctor._util.paths import database_path

    return not database_path().exists()


def read_stored_trace(database: Path, conversation_id: str) -> Trace | None:
    """The stored conversation's trace; None when it is not stored.

    Raises ``sqlite3.Error`` when the file cannot be read as a Proctor store.
    """
    uri = f"file:{quote(str(database.resolve()))}?mode=ro"
    connection = sqlite3.connect(uri, uri=True)
    try:
        header = connection.execute(_CONVERSATION, (conversation_id,)).fetchone()
        if header is None:
            return None
        format_name, cwd, started_at, kind, project = header
        context = TraceContext(
            conversation_id=conversation_id,
            project=project,
            cwd=cwd,
            format=format_name,
            started_at=_when(started_at),
            kind=kind,
        )
        messages = [_message(row) for row in connection.execute(_MESSAGES, (conversation_id,))]
        calls = [_call(row) for row in connection.execute(_TOOL_CALLS, (conversation_id,))]
    finally:
        connection.close()
    return Trace.from_parts(context, messages, calls)


def _message(row: tuple[Any, ...]) -> Message:
    (source_id, role, kind, text, created_at, parent, active, derived, author, model) = row[:10]
    input_tokens, output_tokens, cache_read, cache_write, reasoning, attributes = row[10:]
    usage = None
    if input_tokens is not None:
        usage = Usage(
            input_tokens, output_tokens or 0, cache_read or 0, cache_write or 0, reasoning or 0
        )
    return Message(
        source_id=source_id,
        role=role,
        kind=kind,
        text=text,
        created_at=_when(created_at),
        parent_source_id=parent,
        on_active_branch=bool(active),
        derived=bool(derived),
        author=author,
        model=model,
        usage=usage,
        attributes=_json(attributes) or {},
    )


def _call(row: tuple[Any, ...]) -> ToolCall:
    (source_id, name, arguments, call_id, message_source_id, status, result_text) = row[:7]
    result_size, exit_code, created_at, completed_at, active, attributes = row[7:]
    return ToolCall(
        source_id=source_id,
        name=name,
        arguments=_json(arguments),
        call_id=call_id,
        message_source_id=message_source_id,
        status=status,
        result_text=result_text,
        result_size=result_size,
        exit_code=exit_code,
        created_at=_when(created_at),
        completed_at=_when(completed_at),
        on_active_branch=bool(active),
        attributes=_json(attributes) or {},
    )


def _when(value: str | None) -> datetime | None:
    # As store._schema.UTCDateTime reads SQLite's text.
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _json(value: str | bytes | None) -> Any:
    return None if value is None else orjson.loads(value)
