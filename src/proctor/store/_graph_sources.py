"""The sources behind the graph: excerpts for views, full text and context on demand,
and hourly attention over a result's scope (REV-11, REV-12).

A cited source may have been deleted since (its conversation removed): its reference is
kept and it reads as gone (``exists=False``) rather than failing the whole view.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Select, func, select
from sqlalchemy.engine import Connection

from proctor._util.text import one_line
from proctor.errors import NotFoundError
from proctor.graph.views import (
    AttentionBucket,
    ResultSummary,
    SourceContext,
    SourceExcerpt,
    SourceText,
)
from proctor.store import _schema as t
from proctor.store._graph_rows import among, bound_ids, fetch

EXCERPT_CHARS = 240
_PREFIX_CHARS = 2000
"""How much of a long text a view reads to make an excerpt."""


def _clip(text: str, limit: int = EXCERPT_CHARS) -> str:
    return one_line(text, limit)


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def _message_title(row: Mapping[Any, Any]) -> str:
    return f"{row['role']} message"


def _tool_title(row: Mapping[Any, Any]) -> str:
    exit_code = "" if row["exit_code"] is None else f", exit {row['exit_code']}"
    return f"tool {row['name']} ({row['status']}{exit_code})"


def _task_title(row: Mapping[Any, Any]) -> str:
    return f"task event {row['kind']}"


_Render = Callable[[Mapping[Any, Any]], str]


def _plain_text(row: Mapping[Any, Any]) -> str:
    return str(row["text"] or "")


def _tool_excerpt(row: Mapping[Any, Any]) -> str:
    arguments = _arguments_text(row["arguments"])[:_PREFIX_CHARS]
    return f"{arguments} → {row['result_text'] or ''}"


def _excerpt_select(source_type: str) -> tuple[Select[Any], Any, _Render, _Render] | None:
    """What a view reads of a cited source of ``source_type``: the statement, its id
    column, and how its title and excerpt are made (None: a type views do not quote)."""
    m, tc, te = t.messages.c, t.tool_calls.c, t.task_events.c
    if source_type == "message":
        return (
            select(
                m.source_id,
                m.conversation_id,
                m.role,
                m.created_at,
                func.substr(m.text, 1, _PREFIX_CHARS).label("text"),
            ),
            m.source_id,
            _message_title,
            _plain_text,
        )
    if source_type == "tool_call":
        return (
            select(
                tc.source_id,
                tc.conversation_id,
                tc.name,
                tc.status,
                tc.exit_code,
                tc.arguments,
                tc.created_at,
                func.substr(tc.result_text, 1, _PREFIX_CHARS).label("result_text"),
            ),
            tc.source_id,
            _tool_title,
            _tool_excerpt,
        )
    if source_type == "task_event":
        return (
            select(
                te.source_id,
                te.conversation_id,
                te.kind,
                te.created_at,
                func.substr(te.text, 1, _PREFIX_CHARS).label("text"),
            ),
            te.source_id,
            _task_title,
            _plain_text,
        )
    return None


def excerpts(
    c: Connection, cited: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], SourceExcerpt]:
    """Titles and short excerpts of cited sources; missing ones read as gone."""
    by_type: dict[str, set[str]] = {}
    for source_type, source_id in cited:
        by_type.setdefault(source_type, set()).add(source_id)
    found: dict[tuple[str, str], tuple[str, str, str, datetime | None]] = {}
    """(type, id) → conversation, title, excerpt, time."""
    for source_type, ids in by_type.items():
        spec = _excerpt_select(source_type)
        if spec is None:
            continue
        query, key, title, text = spec
        names = tuple(column.name for column in query.selected_columns)

        def build(query: Select[Any] = query, key: Any = key, ids: set[str] = ids) -> Select[Any]:
            return query.where(among(c, key, ids, name="ids"))

        for values in fetch(c, ("excerpts", source_type), build, ids=bound_ids(c, sorted(ids))):
            row = dict(zip(names, values, strict=True))
            found[(source_type, row["source_id"])] = (
                row["conversation_id"],
                title(row),
                _clip(text(row)),
                row["created_at"],
            )
    titles: dict[str, str | None] = {}
    conversations = sorted({conversation_id for conversation_id, *_ in found.values()})
    if conversations:
        cv = t.conversations.c
        titles.update(
            (row[0], row[1])
            for row in fetch(
                c,
                "excerpt_conversations",
                lambda: select(cv.conversation_id, cv.title).where(
                    among(c, cv.conversation_id, conversations, name="ids")
                ),
                ids=bound_ids(c, conversations),
            )
        )
    result: dict[tuple[str, str], SourceExcerpt] = {}
    # In key order, not a set's: an answer's bytes (and its ETag) are the same in every process.
    for source_type, ids in sorted(by_type.items()):
        for source_id in sorted(ids):
            excerpt = found.get((source_type, source_id))
            if excerpt is None:
                result[(source_type, source_id)] = SourceExcerpt(
                    source_type, source_id, exists=False, title="source deleted"
                )
            else:
                conversation_id, heading, quoted, occurred_at = excerpt
                result[(source_type, source_id)] = SourceExcerpt(
                    source_type=source_type,
                    source_id=source_id,
                    exists=True,
                    conversation_id=conversation_id,
                    conversation_title=titles.get(conversation_id or ""),
                    title=heading,
                    excerpt=quoted,
                    occurred_at=occurred_at,
                )
    return result


def source_text(c: Connection, source_type: str, source_id: str) -> SourceText:
    """The full text of one stored source."""
    if source_type == "message":
        row = (
            c.execute(select(t.messages).where(t.messages.c.source_id == source_id))
            .mappings()
            .first()
        )
        if row is not None:
            return SourceText(
                source_type,
                source_id,
                row["conversation_id"],
                _message_title(row),
                row["text"],
                row["created_at"],
            )
    elif source_type == "tool_call":
        row = (
            c.execute(select(t.tool_calls).where(t.tool_calls.c.source_id == source_id))
            .mappings()
            .first()
        )
        if row is not None:
            text = f"arguments:\n{_arguments_text(row['arguments'])}\n\nresult:\n{row['result_text'] or ''}"
            return SourceText(
                source_type,
                source_id,
                row["conversation_id"],
                _tool_title(row),
                text,
                row["created_at"],
            )
    elif source_type == "task_event":
        row = (
            c.execute(select(t.task_events).where(t.task_events.c.source_id == source_id))
            .mappings()
            .first()
        )
        if row is not None:
            return SourceText(
                source_type,
                source_id,
                row["conversation_id"],
                _task_title(row),
                row["text"],
                row["created_at"],
            )
    raise NotFoundError(f"no {source_type} source {source_id!r} (deleted, or never stored)")


def reading_order(c: Connection, conversation_id: str) -> list[tuple[str, str]]:
    """The conversation's sources in reading order: messages, each followed by its tool calls;
    task events and unattached tool calls placed by time."""
    m, tc, te = t.messages.c, t.tool_calls.c, t.task_events.c
    messages = list(
        c.execute(
            select(m.source_id, m.created_at)
            .where(m.conversation_id == conversation_id)
            .order_by(m.seq)
        )
    )
    calls = list(
        c.execute(
            select(tc.source_id, tc.message_source_id, tc.created_at)
            .where(tc.conversation_id == conversation_id)
            .order_by(tc.seq)
        )
    )
    task_events = list(
        c.execute(
            select(te.source_id, te.created_at)
            .where(te.conversation_id == conversation_id)
            .order_by(te.seq)
        )
    )
    position = {source_id: index for index, (source_id, _) in enumerate(messages)}
    stamps = [created_at for _, created_at in messages]
    timed = all(s is not None for s in stamps) and stamps == sorted(stamps)

    def place(created_at: datetime | None) -> int:
        if created_at is None or not timed:
            return len(messages)
        return bisect.bisect_right(stamps, created_at) - 1

    keyed: list[tuple[int, int, int, str, str]] = [
        (i, 0, 0, "message", s) for i, (s, _) in enumerate(messages)
    ]
    for seq, (source_id, message_id, created_at) in enumerate(calls):
        anchor = position.get(message_id) if message_id is not None else None
        keyed.append(
            (place(created_at) if anchor is None else anchor, 1, seq, "tool_call", source_id)
        )
    for seq, (source_id, created_at) in enumerate(task_events):
        keyed.append((place(created_at), 2, seq, "task_event", source_id))
    keyed.sort()
    return [(source_type, source_id) for _, _, _, source_type, source_id in keyed]


def source_context(
    c: Connection, source_type: str, source_id: str, before: int, after: int
) -> SourceContext:
    """A source with the ``before`` and ``after`` sources around it in its conversation."""
    focus = source_text(c, source_type, source_id)
    timeline = reading_order(c, focus.conversation_id)
    index = timeline.index((source_type, source_id))
    earlier = timeline[max(0, index - before) : index]
    later = timeline[index + 1 : index + 1 + after]
    return SourceContext(
        focus=focus,
        before=tuple(source_text(c, kind, sid) for kind, sid in earlier),
        after=tuple(source_text(c, kind, sid) for kind, sid in later),
    )


def attention(c: Connection, result: ResultSummary) -> list[AttentionBucket]:
    """Messages per hour in the result's project (every project for a global result) and
    time range, computed now; hours without messages are left out."""
    m = t.messages.c
    if c.dialect.name == "postgresql":
        hour: Any = func.date_trunc("hour", func.timezone("UTC", m.created_at))
    else:
        hour = func.substr(m.created_at, 1, 13)
    query = select(hour.label("hour"), func.count().label("n")).where(m.created_at.is_not(None))
    if result.project_id is not None:
        query = query.join(
            t.conversations, t.conversations.c.conversation_id == m.conversation_id
        ).where(t.conversations.c.project_id == result.project_id)
    if result.time_from is not None:
        query = query.where(m.created_at >= result.time_from)
    if result.time_to is not None:
        query = query.where(m.created_at <= result.time_to)
    buckets = []
    for value, count in c.execute(query.group_by(hour).order_by(hour)):
        if isinstance(value, str):
            start = datetime.strptime(value, "%Y-%m-%d %H").replace(tzinfo=UTC)
        else:
            start = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        buckets.append(AttentionBucket(start, int(count)))
    return buckets
