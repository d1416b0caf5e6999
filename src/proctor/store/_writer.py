"""Writing one conversation in one transaction (SPEC STO-3, ING-2).

The writer compares each prepared source with what is stored:

- unknown source → inserted at revision 1;
- same fingerprint and same content → nothing is written (a re-import writes nothing);
- same fingerprint, other metadata → the row is updated in place, revision unchanged;
- other fingerprint → a new revision, recorded in ``source_versions``.

A source id already owned by another conversation (Claude Code can copy a message into a
resumed session's file) is left with its owner and reported as shared.

A file import writes the whole conversation: each source's place (``seq``) is its index
in the bundle, and the stored sources are read by conversation. An append (live intake)
writes only the sources it sends, at the places it gives (``places``): the stored sources
are then read by id, so its cost does not grow with the conversation.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Table, bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection

from proctor.store import _schema as t
from proctor.store._bulk import (
    driver_sql,
    in_direct_writes,
    insert_rows,
    insert_values,
    run_driver,
)
from proctor.store._engine import use_import_cache
from proctor.store._records import SourceKey, WriteOutcome
from proctor.store._rows import (
    MESSAGE_COLUMNS,
    TASK_EVENT_COLUMNS,
    TOOL_CALL_COLUMNS,
    ConversationRows,
    Row,
    conversation_row,
    conversation_rows,
    header_hash,
    subagent_row,
    task_row,
)
from proctor.transcript import PreparedBundle, canonical_time

_CHUNK = 400  # ids per IN (...) clause, well under every backend's parameter limit


def _stored_hash(content_hash: str, seq: int) -> str:
    return hashlib.blake2b(f"{content_hash}:{seq}".encode(), digest_size=16).hexdigest()


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def ensure_project(connection: Connection, name: str, now: datetime) -> str:
    """The id of the project called ``name``, created when missing."""
    found = connection.execute(
        select(t.projects.c.project_id).where(t.projects.c.name == name)
    ).scalar_one_or_none()
    if found is not None:
        return str(found)
    project_id = uuid.uuid4().hex
    connection.execute(
        insert(t.projects).values(project_id=project_id, name=name, status="active", created_at=now)
    )
    return project_id


def _details_hash(bundle: ConversationRows, project_id: str) -> str:
    tasks = [
        (
            task.task_id,
            task.title,
            task.goal,
            task.status,
            canonical_time(task.created_at),
            canonical_time(task.completed_at),
            task.attributes,
        )
        for task in bundle.tasks
    ]
    run = bundle.subagent_run
    run_row = None if run is None else subagent_row(run, bundle.conversation_id)
    extra = orjson.dumps((tasks, run_row), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    head = header_hash(bundle.conversation, project_id, bundle.redactions)
    return hashlib.blake2b(head.encode() + extra, digest_size=16).hexdigest()


# The writer's per-conversation statements, by ``run_driver`` (on the driver's cursor in
# an import's batch): the reads return text and integers only, which SQLAlchemy would hand
# back unconverted; the deletes bind text only.
_HEADER_HASH = "SELECT header_hash FROM conversations WHERE conversation_id = ?"
_STORED_HEAD = (
    "SELECT conversations.header_hash, projects.project_id, projects.name FROM conversations "
    "JOIN projects ON projects.project_id = conversations.project_id "
    "WHERE conversations.conversation_id = ?"
)


@dataclass(frozen=True, slots=True)
class StoredHead:
    """What a write needs of a stored conversation before it writes: its header's hash
    and its project (None for all three when the conversation is not stored)."""

    header_hash: str | None
    project_id: str | None
    project_name: str | None


def stored_head(connection: Connection, conversation_id: str) -> StoredHead:
    """The conversation's stored header hash and project, in one statement."""
    found = run_driver(connection, driver_sql(connection.dialect, _STORED_HEAD), (conversation_id,))
    if not found:
        return StoredHead(None, None, None)
    header, project_id, name = found[0]
    return StoredHead(header, str(project_id), str(name))


_SOURCES_OF = (
    "SELECT source_type, source_id, fingerprint, content_hash, revision "
    "FROM sources WHERE conversation_id = ?"
)
_SOURCES_BY_ID = (
    "SELECT source_type, source_id, fingerprint, content_hash, revision, conversation_id "
    "FROM sources WHERE source_type = ? AND source_id IN ({})"
)
_COUNT_SOURCES = "SELECT count(*) FROM sources WHERE conversation_id = ?"
_DELETE_TASKS = "DELETE FROM tasks WHERE task_id IN ({})"
_DELETE_RUN = "DELETE FROM subagent_runs WHERE conversation_id = ?"


def write_conversation(
    connection: Connection,
    prepared: PreparedBundle,
    project_name: str,
    now: datetime,
    *,
    places: Mapping[SourceKey, int] | None = None,
    projects: dict[str, str] | None = None,
    stored: StoredHead | None = None,
) -> WriteOutcome:
    """Write ``prepared`` inside the caller's transaction and say what changed.

    ``places``: the ``seq`` of each of the bundle's sources, for an append that carries
    only part of the conversation (default: each source's index in the bundle).
    ``projects``: project ids by name already found or created in this transaction
    (a transaction that writes many conversations looks each project up once).
    ``stored``: the conversation's stored header as ``stored_head`` read it in this
    transaction (an append reads it with its project in one statement, not three).
    """
    rows = conversation_rows(prepared, places)
    return write_rows(connection, rows, project_name, now, projects=projects, stored=stored)


def write_rows(
    connection: Connection,
    rows: ConversationRows,
    project_name: str,
    now: datetime,
    *,
    projects: dict[str, str] | None = None,
    stored: StoredHead | None = None,
) -> WriteOutcome:
    """``write_conversation`` of a conversation's rows (``conversation_rows``)."""
    if in_direct_writes():  # an import's batch: many conversations in one transaction
        use_import_cache(connection)
    conversation_id = rows.conversation_id
    project_id = None if projects is None else projects.get(project_name)
    if stored is not None and stored.project_name == project_name:
        project_id = stored.project_id
    if project_id is None:
        project_id = ensure_project(connection, project_name, now)
        if projects is not None:
            projects[project_name] = project_id
    details = _details_hash(rows, project_id)

    if stored is not None:
        existing = stored.header_hash
    else:
        found = run_driver(
            connection,
            driver_sql(connection.dialect, _HEADER_HASH),
            (conversation_id,),
        )
        existing = found[0][0] if found else None
    created = existing is None
    header_changed = not created and existing != details
    header = conversation_row(rows.conversation, project_id) | {
        "origin": rows.origin,
        "redactions": rows.redactions,
        "header_hash": details,
        "updated_at": now,
    }
    if created:
        insert_rows(connection, t.conversations, [header | {"imported_at": now}])
    elif header_changed:
        connection.execute(
            update(t.conversations)
            .where(t.conversations.c.conversation_id == conversation_id)
            .values(**header)
        )
    if created or header_changed:
        _replace_details(connection, rows, created=created)

    counts = _write_sources(connection, rows, now, created=created)
    return WriteOutcome(
        conversation_id=conversation_id,
        created=created,
        header_changed=header_changed,
        redactions=rows.redactions,
        **counts,
    )


def _replace_details(connection: Connection, bundle: ConversationRows, *, created: bool) -> None:
    """Upsert the conversation's tasks and sub-agent record; unchanged tasks are not written.

    Tasks missing from this bundle are kept: another file of the same conversation (an
    OTel log export beside its trace export) may have brought them.
    """
    conversation_id = bundle.conversation_id
    rows = [task_row(task, conversation_id, seq) for seq, task in enumerate(bundle.tasks)]
    if rows and not created:
        stored = {
            row["task_id"]: dict(row)
            for row in connection.execute(
                select(t.tasks).where(t.tasks.c.conversation_id == conversation_id)
            ).mappings()
        }
        rows = [row for row in rows if stored.get(row["task_id"]) != row]
    dialect = connection.dialect
    for chunk in _chunks([row["task_id"] for row in rows]):
        sql = driver_sql(dialect, _DELETE_TASKS.format(", ".join("?" * len(chunk))))
        run_driver(connection, sql, tuple(chunk))
    insert_rows(connection, t.tasks, rows)
    if bundle.subagent_run is not None:
        run_driver(connection, driver_sql(dialect, _DELETE_RUN), (conversation_id,))
        insert_rows(
            connection,
            t.subagent_runs,
            [subagent_row(bundle.subagent_run, conversation_id)],
        )


_CONTENT_TABLES: dict[str, tuple[Table, tuple[str, ...]]] = {
    "message": (t.messages, MESSAGE_COLUMNS),
    "tool_call": (t.tool_calls, TOOL_CALL_COLUMNS),
    "task_event": (t.task_events, TASK_EVENT_COLUMNS),
}
"""Each source type's content table and the columns of its rows (``SourceRow``)."""

_SOURCE_COLUMNS = (
    "source_type",
    "source_id",
    "conversation_id",
    "fingerprint",
    "content_hash",
    "revision",
    "redactions",
    "occurred_at",
    "first_seen_at",
    "updated_at",
)
_VERSION_COLUMNS = ("source_type", "source_id", "revision", "fingerprint", "recorded_at")


def _stored_sources(
    connection: Connection, conversation_id: str, keys: Sequence[SourceKey] | None
) -> dict[SourceKey, tuple[str, str, int]]:
    """Fingerprint, content hash and revision of the conversation's stored sources: all of
    them, or those among ``keys``.

    Sources are looked up by key (the primary key), and their conversation is checked
    here: asked for both, SQLite would walk the conversation's index, every source of it.
    """
    dialect = connection.dialect
    if keys is None:
        rows = run_driver(connection, driver_sql(dialect, _SOURCES_OF), (conversation_id,))
        return {(r[0], r[1]): (r[2], r[3], r[4]) for r in rows}
    by_type: dict[str, list[str]] = {}
    for source_type, source_id in dict.fromkeys(keys):
        by_type.setdefault(source_type, []).append(source_id)
    found: dict[SourceKey, tuple[str, str, int]] = {}
    for source_type, ids in by_type.items():
        for chunk in _chunks(ids):
            sql = driver_sql(dialect, _SOURCES_BY_ID.format(", ".join("?" * len(chunk))))
            for r in run_driver(connection, sql, (source_type, *chunk)):
                if r[5] == conversation_id:
                    found[(r[0], r[1])] = (r[2], r[3], r[4])
    return found


def _write_sources(
    connection: Connection, rows: ConversationRows, now: datetime, *, created: bool
) -> dict[str, Any]:
    conversation_id = rows.conversation_id
    keys = [(source[0], source[1]) for source in rows.sources] if rows.append else None
    stored = {} if created else _stored_sources(connection, conversation_id, keys)
    new_sources: list[tuple[Any, ...]] = []
    new_versions: list[tuple[Any, ...]] = []
    new_content: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in _CONTENT_TABLES}
    revised_sources: list[Row] = []
    touched_sources: list[Row] = []
    replaced_content: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in _CONTENT_TABLES}
    added = revised = unchanged = updated = 0
    shared: list[str] = []

    for (
        source_type,
        source_id,
        fingerprint,
        content_hash,
        redactions,
        seq,
        occurred_at,
        row,
    ) in rows.sources:
        stored_hash = _stored_hash(content_hash, seq)
        previous = stored.get((source_type, source_id))
        if previous is None:
            added += 1
            new_sources.append(
                (
                    source_type,
                    source_id,
                    conversation_id,
                    fingerprint,
                    stored_hash,
                    1,
                    redactions,
                    occurred_at,
                    now,
                    now,
                )
            )
            new_versions.append((source_type, source_id, 1, fingerprint, now))
            new_content[source_type].append(row)
            continue
        old_fingerprint, old_hash, revision = previous
        if old_fingerprint == fingerprint and old_hash == stored_hash:
            unchanged += 1
            continue
        key_values = {"b_type": source_type, "b_id": source_id}
        if old_fingerprint != fingerprint:
            revised += 1
            revised_sources.append(
                key_values
                | {
                    "fingerprint": fingerprint,
                    "content_hash": stored_hash,
                    "revision": revision + 1,
                    "redactions": redactions,
                    "occurred_at": occurred_at,
                    "updated_at": now,
                }
            )
            new_versions.append((source_type, source_id, revision + 1, fingerprint, now))
        else:
            updated += 1
            touched_sources.append(key_values | {"content_hash": stored_hash, "updated_at": now})
        replaced_content[source_type].append(row)

    if new_sources:
        already = None if keys is not None else len(stored)
        owned_elsewhere = _insert_new_sources(connection, new_sources, conversation_id, already)
        if owned_elsewhere:
            shared = [source_id for _, source_id in owned_elsewhere]
            added -= len(owned_elsewhere)
            new_versions = [v for v in new_versions if (v[0], v[1]) not in owned_elsewhere]
            new_content = {
                kind: [r for r in content if (kind, r[0]) not in owned_elsewhere]
                for kind, content in new_content.items()
            }
    insert_values(connection, t.source_versions, _VERSION_COLUMNS, new_versions)
    for kind, content in new_content.items():
        table, columns = _CONTENT_TABLES[kind]
        insert_values(connection, table, columns, content)
    _update_sources(connection, revised_sources, touched_sources)
    for kind, content in replaced_content.items():
        table, columns = _CONTENT_TABLES[kind]
        _replace_content(connection, table, columns, content)
    return {
        "added": added,
        "revised": revised,
        "unchanged": unchanged,
        "updated": updated,
        "shared": tuple(shared),
    }


def _insert_new_sources(
    connection: Connection,
    rows: list[tuple[Any, ...]],
    conversation_id: str,
    already_stored: int | None,
) -> set[SourceKey]:
    """Insert source rows (``_SOURCE_COLUMNS``), skipping ids another conversation owns;
    return the skipped keys.

    Conflicts are rare (a resumed Claude Code session copying messages). A whole
    conversation (``already_stored``: its sources before) checks them with one count
    instead of a lookup of every new id; an append (None) looks up only its new ids.
    """
    insert_values(connection, t.sources, _SOURCE_COLUMNS, rows, skip_conflicts=True)
    inserted = [(row[0], row[1]) for row in rows]
    if already_stored is not None:
        now_stored = run_driver(
            connection, driver_sql(connection.dialect, _COUNT_SOURCES), (conversation_id,)
        )[0][0]
        if now_stored == already_stored + len(rows):
            return set()
    keys = None if already_stored is not None else inserted
    return set(inserted) - set(_stored_sources(connection, conversation_id, keys))


def _update_sources(connection: Connection, revised: list[Row], touched: list[Row]) -> None:
    if not revised and not touched:
        return  # most writes (a new conversation): no statement to build
    where = (t.sources.c.source_type == bindparam("b_type")) & (
        t.sources.c.source_id == bindparam("b_id")
    )
    if revised:
        connection.execute(
            update(t.sources)
            .where(where)
            .values(
                fingerprint=bindparam("fingerprint"),
                content_hash=bindparam("content_hash"),
                revision=bindparam("revision"),
                redactions=bindparam("redactions"),
                occurred_at=bindparam("occurred_at"),
                updated_at=bindparam("updated_at"),
            ),
            revised,
        )
    if touched:
        connection.execute(
            update(t.sources)
            .where(where)
            .values(content_hash=bindparam("content_hash"), updated_at=bindparam("updated_at")),
            touched,
        )


def _replace_content(
    connection: Connection, table: Table, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    if not rows:
        return
    ids = [row[0] for row in rows]  # every content table's first column: source_id
    for chunk in _chunks(ids):
        connection.execute(delete(table).where(table.c.source_id.in_(list(chunk))))
    insert_values(connection, table, columns, rows)
