"""What a trace of one conversation needs beyond its transcript (SPEC UI-3, seed 004).

Two reads, each one statement however long the conversation: which findings cite which
message or tool call, and the sub-agent runs a conversation started, as cards (type, task,
status, duration, tool calls, summary, the child's own findings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, ScalarSelect, Table, case, func, literal, select

from proctor.findings import SEVERITY_ORDER, Severity, Status
from proctor.store import _schema as t
from proctor.store._base import Repository
from proctor.store._reader import conversation_summary
from proctor.store._records import ConversationSummary
from proctor.store._rows import message_from_row, tool_call_from_row
from proctor.transcript import Message, ToolCall, Usage

PROMPT_CHARACTERS = 200
"""How much of a prompt's text the outline keeps (a turn's head repeats it)."""


@dataclass(frozen=True, slots=True)
class Citation:
    """A finding that cites one message or tool call."""

    finding_id: str
    severity: Severity
    status: Status


@dataclass(frozen=True, slots=True)
class SubagentCard:
    """A sub-agent run as its parent shows it (seed 004's "completion card")."""

    conversation_id: str
    """The sub-agent's own conversation (its trace)."""
    parent_conversation_id: str
    parent_tool_call_id: str | None
    """The parent's tool call that started it, when the format links them."""
    title: str | None
    agent_type: str | None
    description: str | None
    """The task it was given."""
    status: str | None
    stop_kind: str | None
    summary: str | None
    """Its final answer as the parent saw it."""
    rounds: int
    total_tokens: int
    tool_uses: int
    """Tool calls the run reported; ``tool_calls`` counts the stored ones."""
    tool_calls: int
    messages: int
    duration_ms: int | None
    """As the run reported it, else from the child's first to last stored time."""
    started_at: datetime | None
    ended_at: datetime | None
    findings: int
    """Findings of the sub-agent's own conversation."""
    open_findings: int

    @property
    def finished(self) -> bool:
        """True once the run has ended (any outcome but running or pending)."""
        state = (self.status or self.stop_kind or "").lower()
        return state not in ("", "running", "pending", "in_progress", "started")


@dataclass(frozen=True, slots=True)
class TraceOutline:
    """Every message and tool call of a conversation, in stored order, without their heavy
    fields: no text (but the start of each prompt), arguments, results or attributes. Enough
    to lay a long trace out; the window shown is read whole with ``trace_sources``."""

    summary: ConversationSummary
    messages: tuple[Message, ...]
    tool_calls: tuple[ToolCall, ...]


def _count(table: Table, child_id: Any, *conditions: ColumnElement[bool]) -> ScalarSelect[int]:
    return (
        select(func.count())
        .select_from(table)
        .where(table.c.conversation_id == child_id, *conditions)
        .scalar_subquery()
    )


def _outline_message(row: Any) -> Message:
    usage = None
    if row.input_tokens is not None:
        usage = Usage(
            row.input_tokens,
            row.output_tokens or 0,
            row.cache_read_tokens or 0,
            row.cache_write_tokens or 0,
            row.reasoning_tokens or 0,
        )
    return Message(
        source_id=row.source_id,
        role=row.role,
        kind=row.kind,
        text=row.text or "",
        created_at=row.created_at,
        on_active_branch=bool(row.on_active_branch),
        model=row.model,
        usage=usage,
    )


class TraceReads(Repository):
    """Reads for the trace view: an outline, whole sources by id, citations per source and
    sub-agent cards."""

    def trace_outline(self, conversation_id: str) -> TraceOutline:
        """The conversation's messages and tool calls without their heavy fields."""
        m = t.messages.c
        c = t.tool_calls.c
        prompt = case(
            (m.kind == "prompt", func.substr(m.text, 1, PROMPT_CHARACTERS)), else_=literal("")
        )
        messages = select(
            m.source_id, m.role, m.kind, prompt.label("text"), m.created_at,
            m.on_active_branch, m.model, m.input_tokens, m.output_tokens,
            m.cache_read_tokens, m.cache_write_tokens, m.reasoning_tokens,
        ).where(m.conversation_id == conversation_id).order_by(m.seq)  # fmt: skip
        calls = select(
            c.source_id, c.name, c.message_source_id, c.status, c.exit_code, c.result_size,
            c.created_at, c.completed_at, c.on_active_branch,
        ).where(c.conversation_id == conversation_id).order_by(c.seq)  # fmt: skip
        with self._read() as connection:
            summary = conversation_summary(connection, conversation_id)
            message_rows = connection.execute(messages).all()
            call_rows = connection.execute(calls).all()
        return TraceOutline(
            summary=summary,
            messages=tuple(_outline_message(row) for row in message_rows),
            tool_calls=tuple(
                ToolCall(
                    source_id=row.source_id,
                    name=row.name,
                    arguments=None,
                    message_source_id=row.message_source_id,
                    status=row.status,
                    exit_code=row.exit_code,
                    result_size=row.result_size,
                    created_at=row.created_at,
                    completed_at=row.completed_at,
                    on_active_branch=bool(row.on_active_branch),
                )
                for row in call_rows
            ),
        )

    def trace_sources(
        self, conversation_id: str, message_ids: Sequence[str], call_ids: Sequence[str]
    ) -> tuple[dict[str, Message], dict[str, ToolCall]]:
        """Whole messages and tool calls of the conversation by source id (a window)."""
        messages: dict[str, Message] = {}
        calls: dict[str, ToolCall] = {}
        with self._read() as connection:
            if message_ids:
                for row in connection.execute(
                    select(t.messages).where(
                        t.messages.c.conversation_id == conversation_id,
                        t.messages.c.source_id.in_(list(message_ids)),
                    )
                ):
                    messages[row.source_id] = message_from_row(row._mapping)
            if call_ids:
                for row in connection.execute(
                    select(t.tool_calls).where(
                        t.tool_calls.c.conversation_id == conversation_id,
                        t.tool_calls.c.source_id.in_(list(call_ids)),
                    )
                ):
                    calls[row.source_id] = tool_call_from_row(row._mapping)
        return messages, calls

    def finding_citations(self, conversation_id: str) -> Mapping[tuple[str, str], list[Citation]]:
        """Per ``(source_type, source_id)``: the findings whose evidence cites it, most
        severe first. One query over the conversation's findings."""
        f = t.findings.c
        query = select(f.finding_id, f.severity, f.status, f.evidence).where(
            f.conversation_id == conversation_id
        )
        cited: dict[tuple[str, str], list[Citation]] = {}
        with self._read() as c:
            for row in c.execute(query):
                citation = Citation(row.finding_id, row.severity, row.status)
                seen: set[tuple[str, str]] = set()
                for evidence in row.evidence or ():
                    key = (str(evidence.get("source_type")), str(evidence.get("source_id")))
                    if key in seen or evidence.get("missing") is not None:
                        continue
                    seen.add(key)
                    cited.setdefault(key, []).append(citation)
        for citations in cited.values():
            citations.sort(key=lambda x: (-SEVERITY_ORDER.get(x.severity, 0), x.finding_id))
        return cited

    def subagent_cards(self, conversation_id: str) -> list[SubagentCard]:
        """The sub-agent conversations ``conversation_id`` started, oldest first, as cards.
        One query: the children, their run records and their counts."""
        child = t.conversations.alias("child")
        run = t.subagent_runs
        f = t.findings.c
        first_seen = (
            select(func.min(t.messages.c.created_at))
            .where(t.messages.c.conversation_id == child.c.conversation_id)
            .scalar_subquery()
        )
        last_seen = (
            select(func.max(t.messages.c.created_at))
            .where(t.messages.c.conversation_id == child.c.conversation_id)
            .scalar_subquery()
        )
        query = (
            select(
                child.c.conversation_id,
                child.c.title,
                child.c.started_at,
                child.c.ended_at,
                run.c.parent_tool_call_id,
                run.c.agent_type,
                run.c.description,
                run.c.status,
                run.c.stop_kind,
                run.c.summary,
                run.c.rounds,
                run.c.total_tokens,
                run.c.tool_uses,
                run.c.duration_ms,
                _count(t.tool_calls, child.c.conversation_id).label("tool_calls"),
                _count(t.messages, child.c.conversation_id).label("messages"),
                _count(t.findings, child.c.conversation_id).label("findings"),
                _count(
                    t.findings, child.c.conversation_id, f.status.in_(("open", "acknowledged"))
                ).label("open_findings"),
                first_seen.label("first_seen"),
                last_seen.label("last_seen"),
            )
            .select_from(child.outerjoin(run, run.c.conversation_id == child.c.conversation_id))
            .where(child.c.parent_conversation_id == conversation_id, child.c.kind == "subagent")
            .order_by(child.c.started_at.nulls_last(), child.c.conversation_id)
        )
        with self._read() as c:
            rows = c.execute(query).all()
        cards = []
        for row in rows:
            started = row.started_at or row.first_seen
            ended = row.ended_at or row.last_seen
            duration = row.duration_ms
            if duration is None and started is not None and ended is not None:
                duration = max(0, int((ended - started).total_seconds() * 1000))
            cards.append(
                SubagentCard(
                    conversation_id=row.conversation_id,
                    parent_conversation_id=conversation_id,
                    parent_tool_call_id=row.parent_tool_call_id,
                    title=row.title,
                    agent_type=row.agent_type,
                    description=row.description,
                    status=row.status,
                    stop_kind=row.stop_kind,
                    summary=row.summary,
                    rounds=row.rounds or 0,
                    total_tokens=row.total_tokens or 0,
                    tool_uses=row.tool_uses or 0,
                    tool_calls=row.tool_calls,
                    messages=row.messages,
                    duration_ms=duration,
                    started_at=started,
                    ended_at=ended,
                    findings=row.findings,
                    open_findings=row.open_findings,
                )
            )
        return cards
