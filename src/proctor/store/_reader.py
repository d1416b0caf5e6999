"""Read queries. Everything here runs on a read-only connection."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Select, Table, func, select
from sqlalchemy.engine import Connection

from proctor.errors import NotFoundError
from proctor.store import _schema as t
from proctor.store._records import (
    ConversationSummary,
    ExcerptRequest,
    ImportedFile,
    ImportIssueRecord,
    ImportRecord,
    ProjectSummary,
    SourceVersion,
    StoreCounts,
    StoredSource,
    StoredTranscript,
    TranscriptExcerpt,
)
from proctor.store._rows import (
    conversation_from_row,
    message_from_row,
    subagent_from_row,
    task_event_from_row,
    task_from_row,
    tool_call_from_row,
)
from proctor.transcript import Message


def _count_of(table: Any) -> Any:
    return (
        select(func.count())
        .where(table.c.conversation_id == t.conversations.c.conversation_id)
        .scalar_subquery()
    )


def _summary_query() -> Select[Any]:
    child = t.conversations.alias("child")
    subagents = (
        select(func.count())
        .where(child.c.parent_conversation_id == t.conversations.c.conversation_id)
        .where(child.c.kind == "subagent")
        .scalar_subquery()
    )
    return select(
        t.conversations,
        t.projects.c.name.label("project_name"),
        _count_of(t.messages).label("message_count"),
        _count_of(t.tool_calls).label("tool_call_count"),
        subagents.label("subagent_count"),
    ).join(t.projects, t.projects.c.project_id == t.conversations.c.project_id)


def _summary(row: Any) -> ConversationSummary:
    mapping = row._mapping
    return ConversationSummary(
        conversation=conversation_from_row(mapping),
        project=mapping["project_name"],
        messages=mapping["message_count"],
        tool_calls=mapping["tool_call_count"],
        subagents=mapping["subagent_count"],
        redactions=mapping["redactions"],
        origin=mapping["origin"],
        imported_at=mapping["imported_at"],
        updated_at=mapping["updated_at"],
    )


def list_conversations(
    connection: Connection,
    *,
    project: str | None = None,
    include_children: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> list[ConversationSummary]:
    """Conversations, newest first; sub-agent conversations only when asked."""
    query = _summary_query()
    if project is not None:
        query = query.where(t.projects.c.name == project)
    if not include_children:
        query = query.where(t.conversations.c.parent_conversation_id.is_(None))
    query = query.order_by(
        t.conversations.c.started_at.desc().nulls_last(), t.conversations.c.conversation_id
    )
    return [_summary(row) for row in connection.execute(query.limit(limit).offset(offset))]


def count_conversations(
    connection: Connection, *, project: str | None = None, include_children: bool = False
) -> int:
    """How many conversations ``list_conversations`` would page over."""
    query = select(func.count()).select_from(
        t.conversations.join(t.projects, t.projects.c.project_id == t.conversations.c.project_id)
    )
    if project is not None:
        query = query.where(t.projects.c.name == project)
    if not include_children:
        query = query.where(t.conversations.c.parent_conversation_id.is_(None))
    return int(connection.execute(query).scalar_one())


def resolve_conversation_id(connection: Connection, ref: str) -> str:
    """Accept a full conversation id, an external id, or a unique prefix of either."""
    c = t.conversations.c
    exact = (
        connection.execute(
            select(c.conversation_id).where((c.conversation_id == ref) | (c.external_id == ref))
        )
        .scalars()
        .all()
    )
    if len(exact) == 1:
        return str(exact[0])
    candidates = (
        connection.execute(
            select(c.conversation_id)
            .where(
                c.conversation_id.startswith(ref, autoescape=True)
                | c.external_id.startswith(ref, autoescape=True)
            )
            .limit(6)
        )
        .scalars()
        .all()
    )
    if len(candidates) == 1:
        return str(candidates[0])
    if not candidates and not exact:
        raise NotFoundError(
            f"no conversation matches {ref!r}; `proctor conversations list` shows the ids"
        )
    shown = ", ".join(sorted(str(x) for x in (exact or candidates))[:5])
    raise NotFoundError(f"{ref!r} matches several conversations ({shown}); give more of the id")


def conversation_summary(connection: Connection, conversation_id: str) -> ConversationSummary:
    """The summary of one conversation."""
    row = connection.execute(
        _summary_query().where(t.conversations.c.conversation_id == conversation_id)
    ).first()
    if row is None:
        raise NotFoundError(f"no conversation {conversation_id!r}")
    return _summary(row)


def iter_messages(connection: Connection, conversation_id: str) -> Iterator[Message]:
    """Messages of a conversation in stored order."""
    query = (
        select(t.messages)
        .where(t.messages.c.conversation_id == conversation_id)
        .order_by(t.messages.c.seq)
    )
    for row in connection.execute(query):
        yield message_from_row(row._mapping)


def load_transcript(connection: Connection, conversation_id: str) -> StoredTranscript:
    """A conversation with all its messages, tool calls, tasks and children."""
    summary = conversation_summary(connection, conversation_id)

    def rows(table: Any) -> Sequence[Any]:
        query = (
            select(table).where(table.c.conversation_id == conversation_id).order_by(table.c.seq)
        )
        return connection.execute(query).all()

    run_row = connection.execute(
        select(t.subagent_runs).where(t.subagent_runs.c.conversation_id == conversation_id)
    ).first()
    children = [
        _summary(row)
        for row in connection.execute(
            _summary_query()
            .where(t.conversations.c.parent_conversation_id == conversation_id)
            .order_by(t.conversations.c.started_at.nulls_last(), t.conversations.c.conversation_id)
        )
    ]
    return StoredTranscript(
        summary=summary,
        messages=tuple(message_from_row(r._mapping) for r in rows(t.messages)),
        tool_calls=tuple(tool_call_from_row(r._mapping) for r in rows(t.tool_calls)),
        tasks=tuple(task_from_row(r._mapping) for r in rows(t.tasks)),
        task_events=tuple(task_event_from_row(r._mapping) for r in rows(t.task_events)),
        subagent_run=None if run_row is None else subagent_from_row(run_row._mapping),
        children=tuple(children),
    )


def get_source(connection: Connection, source_type: str, source_id: str) -> StoredSource:
    """The current version of a source."""
    row = connection.execute(
        select(t.sources).where(
            t.sources.c.source_type == source_type, t.sources.c.source_id == source_id
        )
    ).first()
    if row is None:
        raise NotFoundError(f"no {source_type} source {source_id!r}")
    m = row._mapping
    return StoredSource(
        m["source_type"],
        m["source_id"],
        m["conversation_id"],
        m["fingerprint"],
        m["revision"],
        m["redactions"],
        m["occurred_at"],
    )


def source_versions(
    connection: Connection, source_type: str, source_id: str
) -> list[SourceVersion]:
    """Every recorded revision of a source, oldest first."""
    query = (
        select(t.source_versions)
        .where(
            t.source_versions.c.source_type == source_type,
            t.source_versions.c.source_id == source_id,
        )
        .order_by(t.source_versions.c.revision)
    )
    return [
        SourceVersion(r.source_type, r.source_id, r.revision, r.fingerprint, r.recorded_at)
        for r in connection.execute(query)
    ]


def list_projects(connection: Connection) -> list[ProjectSummary]:
    """Projects with their conversation counts."""
    count = (
        select(func.count())
        .where(t.conversations.c.project_id == t.projects.c.project_id)
        .where(t.conversations.c.parent_conversation_id.is_(None))
        .scalar_subquery()
    )
    query = select(t.projects, count.label("n")).order_by(t.projects.c.name)
    return [
        ProjectSummary(r.project_id, r.name, r.status, r.n, r.created_at)
        for r in connection.execute(query)
    ]


def counts(connection: Connection) -> StoreCounts:
    """Row counts of the main tables."""

    def n(table: Any) -> int:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())

    return StoreCounts(
        projects=n(t.projects),
        conversations=n(t.conversations),
        messages=n(t.messages),
        tool_calls=n(t.tool_calls),
        tasks=n(t.tasks),
        task_events=n(t.task_events),
        subagent_runs=n(t.subagent_runs),
        sources=n(t.sources),
    )


def imported_file(connection: Connection, path: str) -> ImportedFile | None:
    """The fast-path record of a read unit, when it was imported before."""
    row = connection.execute(select(t.import_files).where(t.import_files.c.path == path)).first()
    if row is None:
        return None
    return ImportedFile(
        row.path,
        row.content_hash,
        row.size,
        row.adapter,
        row.adapter_version,
        tuple(row.conversation_ids),
    )


def imported_files(connection: Connection, paths: Sequence[str]) -> dict[str, ImportedFile]:
    """The fast-path records of those read units imported before, by path."""
    found: dict[str, ImportedFile] = {}
    for start in range(0, len(paths), 400):
        chunk = list(paths[start : start + 400])
        rows = connection.execute(select(t.import_files).where(t.import_files.c.path.in_(chunk)))
        for row in rows:
            found[row.path] = ImportedFile(
                row.path,
                row.content_hash,
                row.size,
                row.adapter,
                row.adapter_version,
                tuple(row.conversation_ids),
            )
    return found


def existing_conversation_ids(connection: Connection, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` are stored."""
    found: set[str] = set()
    for start in range(0, len(ids), 400):
        chunk = list(ids[start : start + 400])
        found.update(
            connection.execute(
                select(t.conversations.c.conversation_id).where(
                    t.conversations.c.conversation_id.in_(chunk)
                )
            ).scalars()
        )
    return found


def list_imports(connection: Connection, limit: int = 20) -> list[ImportRecord]:
    """The most recent imports, newest first."""
    query = select(t.imports).order_by(t.imports.c.started_at.desc()).limit(limit)
    return [import_record(r) for r in connection.execute(query)]


def import_record(r: Any) -> ImportRecord:
    """An ``imports`` row as a record."""
    return ImportRecord(
        import_id=r.import_id,
        started_at=r.started_at,
        finished_at=r.finished_at,
        status=r.status,
        paths=tuple(r.paths),
        files=r.files,
        conversations=r.conversations,
        conversations_written=r.conversations_written,
        sources_added=r.sources_added,
        sources_revised=r.sources_revised,
        sources_unchanged=r.sources_unchanged,
        redactions=r.redactions,
        issues=r.issues,
        format=r.format,
        project=r.project,
    )


def import_issues(connection: Connection, import_id: str) -> list[ImportIssueRecord]:
    """Issues recorded by one import."""
    query = (
        select(t.import_issues)
        .where(t.import_issues.c.import_id == import_id)
        .order_by(t.import_issues.c.issue_id)
    )
    return [
        ImportIssueRecord(r.path, r.line, r.severity, r.reason) for r in connection.execute(query)
    ]


_CONTENT: dict[str, Table] = {
    "message": t.messages,
    "tool_call": t.tool_calls,
    "task_event": t.task_events,
}


def transcript_excerpt(
    connection: Connection, conversation_id: str, wanted: ExcerptRequest
) -> TranscriptExcerpt | None:
    """What an append to ``conversation_id`` needs of it; None when it is not stored.

    Every query is bounded by what is asked (by id, or ``LIMIT``) or by the conversation's
    tasks, never by its messages, so the cost does not grow with the conversation.
    """
    # The conversation and where each kind of content continues, in one round trip.
    lasts = [
        select(func.max(table.c.seq))
        .where(table.c.conversation_id == conversation_id)
        .scalar_subquery()
        .label(f"last_{kind}")
        for kind, table in _CONTENT.items()
    ]
    row = connection.execute(
        select(t.conversations, *lasts).where(t.conversations.c.conversation_id == conversation_id)
    ).first()
    if row is None:
        return None
    conversation = conversation_from_row(row._mapping)
    messages = {
        m["source_id"]: m
        for m in _by_ids(connection, t.messages, conversation_id, wanted.message_ids)
    }
    revised = len(messages)
    m = t.messages.c
    mine = m.conversation_id == conversation_id
    latest = select(t.messages).where(mine).order_by(m.seq.desc())
    for found in connection.execute(latest.limit(1)).mappings():
        messages.setdefault(found["source_id"], found)
    if wanted.latest_assistant:
        # The latest assistant message may be revised into another role by this request:
        # one more than the request revises is always enough.
        assistants = latest.where(m.role == "assistant").limit(revised + 1)
        for found in connection.execute(assistants).mappings():
            messages.setdefault(found["source_id"], found)
    if wanted.first_prompt and conversation.title:
        # A conversation without a title has no prompt with text: its title would have
        # been made from it. Prompts are read in order until one with text stays.
        prompts = select(t.messages).where(mine, m.kind == "prompt").order_by(m.seq)
        result = connection.execute(prompts.execution_options(yield_per=64))
        try:
            for found in result.mappings():
                messages.setdefault(found["source_id"], found)
                if found["text"].strip() and found["source_id"] not in wanted.message_ids:
                    break
        finally:
            result.close()  # PostgreSQL: the server-side cursor of the rows not read
    calls = _by_ids(connection, t.tool_calls, conversation_id, wanted.call_ids)
    events = _by_ids(connection, t.task_events, conversation_id, wanted.event_ids)
    ordered_messages = sorted(messages.values(), key=lambda r: r["seq"])
    places = {
        **{("message", r["source_id"]): r["seq"] for r in ordered_messages},
        **{("tool_call", r["source_id"]): r["seq"] for r in calls},
        **{("task_event", r["source_id"]): r["seq"] for r in events},
    }
    tasks = connection.execute(
        select(t.tasks).where(t.tasks.c.conversation_id == conversation_id).order_by(t.tasks.c.seq)
    ).mappings()
    run_row = connection.execute(
        select(t.subagent_runs).where(t.subagent_runs.c.conversation_id == conversation_id)
    ).first()
    return TranscriptExcerpt(
        conversation=conversation,
        redactions=row._mapping["redactions"],
        messages=tuple(message_from_row(r) for r in ordered_messages),
        tool_calls=tuple(tool_call_from_row(r) for r in calls),
        tasks=tuple(task_from_row(r) for r in tasks),
        task_events=tuple(task_event_from_row(r) for r in events),
        subagent_run=None if run_row is None else subagent_from_row(run_row._mapping),
        places=places,
        next_places={kind: _next_place(row._mapping[f"last_{kind}"]) for kind in _CONTENT},
    )


def _by_ids(
    connection: Connection, table: Table, conversation_id: str, ids: frozenset[str]
) -> list[Any]:
    """This conversation's rows of ``table`` among ``ids``, in stored order.

    Looked up by id (the primary key) and checked for the conversation here: asked for
    both, SQLite may walk the conversation's index, every row of it.
    """
    found: list[Any] = []
    wanted = sorted(ids)
    for start in range(0, len(wanted), 400):
        query = select(table).where(table.c.source_id.in_(wanted[start : start + 400]))
        found.extend(
            row
            for row in connection.execute(query).mappings()
            if row["conversation_id"] == conversation_id
        )
    return sorted(found, key=lambda r: r["seq"])


def _next_place(last: int | None) -> int:
    """The ``seq`` after the conversation's last row of a content table (0 when it has none)."""
    return 0 if last is None else int(last) + 1
