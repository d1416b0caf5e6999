"""Fit a bundle to what every store holds, the same way on SQLite and PostgreSQL.

SQLite takes any string and any integer up to 64 bits; PostgreSQL refuses NUL
characters, longer strings than a column's width and integers past a column's range.
So that a record stores the same (or is refused the same) on both, every value is
given its stored form here, once, before fingerprints are computed:

- every string: NUL and lone surrogates become U+FFFD (``transcript.clean_text``);
- ids longer than ``MAX_ID_CHARS``: their first characters plus a hash of the whole id,
  so distinct ids stay distinct and every reference to one id fits it the same way;
- names and labels (tool name, model, author, kinds, statuses): cut to their column's
  width, marked with ``…``;
- counts (tokens, rounds, exit codes, sizes): held within ``±MAX_COUNT``;
- times: aware UTC; one that has no UTC equivalent (year 1 with an offset) is dropped.

Free text and JSON values (arguments, attributes) are fitted where they are redacted
and bounded (``_prepare``), so they are walked once.
"""

from __future__ import annotations

import hashlib
import operator
from datetime import UTC, datetime
from itertools import repeat
from typing import Any, TypeVar

from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
    clean_text,
    replaced,
)

MAX_ID_CHARS = 255
"""Longest stored id (the store's id columns)."""

MAX_COUNT = 2**31 - 1
"""Largest stored count (the store's integer columns); larger ones are held at it."""

NAME_CHARS = 200
"""Tool names, model names, authors, agent types, project hints."""
FORMAT_CHARS = 64
KIND_CHARS = 16
"""Message roles and kinds, tool-call statuses, conversation kinds."""
EVENT_KIND_CHARS = 64
STATUS_CHARS = 32
"""Task, task-event and sub-agent statuses."""

_HASH_CHARS = 16
_T = TypeVar("_T")


def fit_id(value: str) -> str:
    """An id as stored: clean, and at most ``MAX_ID_CHARS`` (prefix plus hash when longer)."""
    value = clean_text(value)
    if len(value) <= MAX_ID_CHARS:
        return value
    digest = hashlib.blake2b(value.encode(), digest_size=_HASH_CHARS // 2).hexdigest()
    return f"{value[: MAX_ID_CHARS - _HASH_CHARS - 1]}~{digest}"


def fit_optional_id(value: str | None) -> str | None:
    """``fit_id`` for an optional id."""
    return None if value is None else fit_id(value)


def fit_label(value: str, width: int) -> str:
    """A name or label as stored: clean, cut to ``width`` characters (``…`` marks a cut)."""
    value = clean_text(value)
    return value if len(value) <= width else value[: width - 1] + "…"


def fit_optional_label(value: str | None, width: int) -> str | None:
    """``fit_label`` for an optional label."""
    return None if value is None else fit_label(value, width)


def fit_count(value: int) -> int:
    """A count held within ``±MAX_COUNT``."""
    return max(-MAX_COUNT, min(MAX_COUNT, value))


def fit_optional_count(value: int | None) -> int | None:
    """``fit_count`` for an optional count."""
    return None if value is None else fit_count(value)


def fit_time(value: datetime | None) -> datetime | None:
    """An aware UTC time (naive means UTC); None when it has no UTC equivalent."""
    if value is None or value.tzinfo is UTC:
        return value
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return None


def _changed(item: _T, **fitted: Any) -> _T:
    """``item`` with ``fitted`` fields, or ``item`` itself when none changed (most items:
    replacing every item of a large import costs more than checking it)."""
    # Field by field in C: ``getattr`` of each name, ``is`` against each fitted value.
    if all(map(operator.is_, map(getattr, repeat(item), fitted), fitted.values())):
        return item
    return replaced(item, **fitted)


def _usage(usage: Usage | None) -> Usage | None:
    if usage is None:
        return None
    counts = (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
    )
    if all(-MAX_COUNT <= count <= MAX_COUNT for count in counts):
        return usage
    return Usage(
        fit_count(usage.input_tokens),
        fit_count(usage.output_tokens),
        fit_count(usage.cache_read_tokens),
        fit_count(usage.cache_write_tokens),
        fit_count(usage.reasoning_tokens),
    )


def _conversation(conversation: Conversation) -> Conversation:
    return _changed(
        conversation,
        conversation_id=fit_id(conversation.conversation_id),
        format=fit_label(conversation.format, FORMAT_CHARS),
        external_id=fit_id(conversation.external_id),
        title=None if conversation.title is None else clean_text(conversation.title),
        parent_conversation_id=fit_optional_id(conversation.parent_conversation_id),
        project_hint=fit_optional_label(conversation.project_hint, NAME_CHARS),
        cwd=None if conversation.cwd is None else clean_text(conversation.cwd),
        started_at=fit_time(conversation.started_at),
        ended_at=fit_time(conversation.ended_at),
        model=fit_optional_label(conversation.model, NAME_CHARS),
    )


def _kept(value: object, width: int) -> bool:
    """True when ``fit_id`` (``width`` ``MAX_ID_CHARS``) or ``fit_label`` returns
    ``value`` itself: an ASCII string without NUL (``clean_text`` keeps it) that fits."""
    return type(value) is str and value.isascii() and len(value) <= width and "\x00" not in value


def _optional_kept(value: object, width: int) -> bool:
    """``_kept`` for an optional value: None is kept too."""
    return value is None or _kept(value, width)


def _time_kept(value: datetime | None) -> bool:
    """True when ``fit_time`` returns ``value`` itself (None, or a time in UTC)."""
    return value is None or value.tzinfo is UTC


def _count_kept(value: object) -> bool:
    """True when ``fit_optional_count`` returns ``value`` itself."""
    return value is None or (type(value) is int and -MAX_COUNT <= value <= MAX_COUNT)


def _message(message: Message) -> Message:
    # Most messages fit as they are: told with a few tests in one expression instead
    # of a fit call per field and ``_changed``'s comparison (the same result).
    if (
        _kept(message.source_id, MAX_ID_CHARS)
        and _optional_kept(message.parent_source_id, MAX_ID_CHARS)
        and _optional_kept(message.author, NAME_CHARS)
        and _optional_kept(message.model, NAME_CHARS)
        and _time_kept(message.created_at)
        and _usage(message.usage) is message.usage
    ):
        return message
    return _changed(
        message,
        source_id=fit_id(message.source_id),
        created_at=fit_time(message.created_at),
        parent_source_id=fit_optional_id(message.parent_source_id),
        author=fit_optional_label(message.author, NAME_CHARS),
        model=fit_optional_label(message.model, NAME_CHARS),
        usage=_usage(message.usage),
    )


def _tool_call(call: ToolCall) -> ToolCall:
    # As ``_message``: most calls fit as they are.
    if (
        _kept(call.source_id, MAX_ID_CHARS)
        and _kept(call.name, NAME_CHARS)
        and _optional_kept(call.call_id, MAX_ID_CHARS)
        and _optional_kept(call.message_source_id, MAX_ID_CHARS)
        and _count_kept(call.result_size)
        and _count_kept(call.exit_code)
        and _time_kept(call.created_at)
        and _time_kept(call.completed_at)
    ):
        return call
    return _changed(
        call,
        source_id=fit_id(call.source_id),
        name=fit_label(call.name, NAME_CHARS),
        call_id=fit_optional_id(call.call_id),
        message_source_id=fit_optional_id(call.message_source_id),
        result_size=fit_optional_count(call.result_size),
        exit_code=fit_optional_count(call.exit_code),
        created_at=fit_time(call.created_at),
        completed_at=fit_time(call.completed_at),
    )


def _task(task: Task) -> Task:
    return _changed(
        task,
        task_id=fit_id(task.task_id),
        status=fit_label(task.status, STATUS_CHARS),
        created_at=fit_time(task.created_at),
        completed_at=fit_time(task.completed_at),
    )


def _task_event(event: TaskEvent) -> TaskEvent:
    return _changed(
        event,
        source_id=fit_id(event.source_id),
        kind=fit_label(event.kind, EVENT_KIND_CHARS),
        task_id=fit_optional_id(event.task_id),
        status=fit_optional_label(event.status, STATUS_CHARS),
        created_at=fit_time(event.created_at),
    )


def _labels(names: tuple[str, ...]) -> tuple[str, ...]:
    fitted = tuple(fit_label(name, NAME_CHARS) for name in names)
    return names if fitted == names else fitted


def _run(run: SubagentRun | None) -> SubagentRun | None:
    if run is None:
        return None
    return _changed(
        run,
        parent_tool_call_id=fit_optional_id(run.parent_tool_call_id),
        agent_type=fit_optional_label(run.agent_type, NAME_CHARS),
        status=fit_optional_label(run.status, STATUS_CHARS),
        rounds=fit_count(run.rounds),
        total_tokens=fit_count(run.total_tokens),
        tool_uses=fit_count(run.tool_uses),
        rejected_tools=_labels(run.rejected_tools),
        stop_kind=fit_optional_label(run.stop_kind, EVENT_KIND_CHARS),
        duration_ms=fit_optional_count(run.duration_ms),
    )


def fit_bundle(bundle: ConversationBundle) -> ConversationBundle:
    """``bundle`` with ids, names, labels, counts and times in their stored form.

    Idempotent; free text and JSON values are left to ``prepare_bundle``.
    """
    return replaced(
        bundle,
        conversation=_conversation(bundle.conversation),
        messages=tuple(_message(m) for m in bundle.messages),
        tool_calls=tuple(_tool_call(c) for c in bundle.tool_calls),
        tasks=tuple(_task(t) for t in bundle.tasks),
        task_events=tuple(_task_event(e) for e in bundle.task_events),
        subagent_run=_run(bundle.subagent_run),
        origin=None if bundle.origin is None else clean_text(bundle.origin),
    )
