"""Conversations: list and show."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._models import ConversationPage
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
