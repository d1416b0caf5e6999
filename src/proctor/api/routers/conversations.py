"""Conversations: list, show, their sources and their transcript for reading."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from proctor.api._deps import Limit, Offset, ReaderDep
from proctor.api._inbox_models import ConversationFindingsPage, ConversationRow
from proctor.api._source_models import ConversationSources
from proctor.api._transcript import (
    ParentLink,
    SubagentCardOut,
    TraceContext,
    TranscriptPage,
    card_out,
    transcript_page,
)
from proctor.errors import NotFoundError
from proctor.findings import Severity
from proctor.store import ConversationSort, ConversationSummary, ReadStore, SortOrder

router = APIRouter(prefix="/conversations", tags=["conversations"])


@router.get("")
def list_conversations(
    store: ReaderDep,
    project: Annotated[str | None, Query(description="Only this project (by name).")] = None,
    include_children: Annotated[bool, Query(description="Also sub-agent conversations.")] = False,
    has_open: Annotated[
        bool | None,
        Query(description="Only conversations with (true) or without (false) open findings."),
    ] = None,
    min_severity: Annotated[
        Severity | None, Query(description="Only those with an open finding this severe or more.")
    ] = None,
    sort: Annotated[
        ConversationSort, Query(description="started (default), open_findings or top_severity.")
    ] = "started",
    order: Annotated[SortOrder, Query(description="asc or desc.")] = "desc",
    limit: Limit = 20,
    offset: Offset = 0,
) -> ConversationFindingsPage:
    """Conversations (newest first by default), each with its open-finding count and the
    highest severity among its open findings; filter and sort by them."""
    rows, total = store.conversations_with_findings(
        project=project,
        include_children=include_children,
        has_open=has_open,
        min_severity=min_severity,
        sort=sort,
        order=order,
        limit=limit,
        offset=offset,
    )
    return ConversationFindingsPage(
        limit=limit,
        offset=offset,
        total=total,
        conversations=[
            ConversationRow.of(summary, found.open, found.top_severity) for summary, found in rows
        ],
    )


@router.get("/{conversation_ref}")
def show_conversation(store: ReaderDep, conversation_ref: str) -> ConversationSummary:
    """One conversation by id, external id or unique prefix."""
    return store.conversation(store.resolve_conversation_id(conversation_ref))


@router.get("/{conversation_ref}/sources")
def conversation_sources(
    store: ReaderDep, conversation_ref: str, limit: Limit = 20, offset: Offset = 0
) -> ConversationSources:
    """A page of the conversation's messages, tool calls and task events in reading order,
    each with its source id (for ``/api/sources/{type}/{id}``) and full text."""
    conversation_id = store.resolve_conversation_id(conversation_ref)
    page = store.conversation_sources(conversation_id, limit=limit, offset=offset)
    return ConversationSources(
        conversation_id=conversation_id,
        limit=limit,
        offset=offset,
        total=page.total,
        sources=list(page.sources),
    )


@router.get("/{conversation_ref}/subagents")
def conversation_subagents(store: ReaderDep, conversation_ref: str) -> list[SubagentCardOut]:
    """The sub-agent runs this conversation started, oldest first, as cards: type, task,
    status, duration, tool calls, final summary and the sub-agent's own findings."""
    return [
        card_out(card)
        for card in store.subagent_cards(store.resolve_conversation_id(conversation_ref))
    ]


@router.get("/{conversation_ref}/transcript")
def conversation_transcript(
    store: ReaderDep,
    conversation_ref: str,
    limit: Annotated[int, Query(ge=1, le=500, description="How many items (1–500).")] = 100,
    offset: Offset = 0,
    around: Annotated[
        str | None, Query(description="Return the window holding this source id instead.")
    ] = None,
    turn: Annotated[
        int | None, Query(ge=0, description="Return the window holding this turn's start.")
    ] = None,
) -> TranscriptPage:
    """The conversation as a trace, a window at a time: messages and tool calls in reading
    order with the raw fields findings cite, grouped into turns, timed for a waterfall,
    with status, model, tokens, the findings citing each item and sub-agent cards."""
    conversation_id = store.resolve_conversation_id(conversation_ref)
    outline = store.trace_outline(conversation_id)
    context = _trace_context(store, conversation_id, outline.summary)
    return transcript_page(
        outline,
        context,
        limit=limit,
        offset=offset,
        around=around,
        turn=turn,
        load=lambda messages, calls: store.trace_sources(conversation_id, messages, calls),
    )


def _trace_context(
    store: ReadStore, conversation_id: str, summary: ConversationSummary
) -> TraceContext:
    parent_id = summary.conversation.parent_conversation_id
    parent = own = None
    if parent_id is not None:
        try:
            parent_summary = store.conversation(parent_id)
        except NotFoundError:  # only the sub-agent's own file was imported
            parent = ParentLink(
                conversation_id=parent_id, title=None, tool_call_id=None, imported=False
            )
        else:
            own = next(
                (
                    c
                    for c in store.subagent_cards(parent_id)
                    if c.conversation_id == conversation_id
                ),
                None,
            )
            parent = ParentLink(
                conversation_id=parent_id,
                title=parent_summary.conversation.title,
                tool_call_id=None if own is None else own.parent_tool_call_id,
            )
    cards = store.subagent_cards(conversation_id) if summary.subagents else []
    return TraceContext(
        citations=store.finding_citations(conversation_id),
        cards=cards,
        parent=parent,
        own_card=own,
    )
