"""Conversations: list, show, their sources and their transcript for reading."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import ConversationPage
from proctor.api._source_models import ConversationSources
from proctor.api._transcript import TranscriptPage, transcript_page
from proctor.store import ConversationSummary

router = APIRouter(prefix="/conversations", tags=["conversations"])


@router.get("")
def list_conversations(
    store: StoreDep,
    project: Annotated[str | None, Query(description="Only this project (by name).")] = None,
    include_children: Annotated[bool, Query(description="Also sub-agent conversations.")] = False,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ConversationPage:
    """Conversations, newest first."""
    rows = store.list_conversations(
        project=project, include_children=include_children, limit=limit, offset=offset
    )
    total = store.count_conversations(project=project, include_children=include_children)
    return ConversationPage(limit=limit, offset=offset, total=total, conversations=rows)


@router.get("/{conversation_ref}")
def show_conversation(store: StoreDep, conversation_ref: str) -> ConversationSummary:
    """One conversation by id, external id or unique prefix."""
    return store.conversation(store.resolve_conversation_id(conversation_ref))


@router.get("/{conversation_ref}/sources")
def conversation_sources(
    store: StoreDep, conversation_ref: str, limit: Limit = 20, offset: Offset = 0
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


@router.get("/{conversation_ref}/transcript")
def conversation_transcript(
    store: StoreDep,
    conversation_ref: str,
    limit: Annotated[int, Query(ge=1, le=200, description="How many items (1–200).")] = 100,
    offset: Offset = 0,
    around: Annotated[
        str | None, Query(description="Return the page holding this source id instead.")
    ] = None,
) -> TranscriptPage:
    """Messages and tool calls in reading order, with the raw fields findings cite."""
    transcript = store.transcript(store.resolve_conversation_id(conversation_ref))
    return transcript_page(transcript, limit=limit, offset=offset, around=around)
