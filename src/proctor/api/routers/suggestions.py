"""Suggestions: list, show, accept, ignore (HB-5, HB-6).

Accepting an open item makes a paused task; accepting a convention confirms its entity
and records a memory. Both actions are idempotent; deciding the other way is refused.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from proctor.api._deps import Limit, Offset, StoreDep
from proctor.api._heartbeat_models import SuggestionPage
from proctor.heartbeat.suggestions import accept_suggestion, ignore_suggestion
from proctor.store._suggestion_records import Decision, SuggestionRecord, SuggestionStatus

router = APIRouter(prefix="/suggestions", tags=["heartbeat"])

SuggestionRef = Annotated[
    str, Path(min_length=1, max_length=200, description="A suggestion id or unique prefix.")
]


@router.get("")
def list_suggestions(
    store: StoreDep,
    status: Annotated[
        SuggestionStatus | None, Query(description="Only this status (all when absent).")
    ] = None,
    project: Annotated[
        str | None, Query(min_length=1, max_length=500, description="Only this project.")
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> SuggestionPage:
    """Suggestions, newest first."""
    found = store.suggestions(status=status, project=project, limit=limit + offset)[offset:]
    return SuggestionPage(limit=limit, offset=offset, suggestions=found)


@router.get("/{suggestion_ref}")
def show_suggestion(store: StoreDep, suggestion_ref: SuggestionRef) -> SuggestionRecord:
    """One suggestion with its evidence."""
    return store.suggestion(suggestion_ref)


@router.post("/{suggestion_ref}/accept")
def accept(store: StoreDep, suggestion_ref: SuggestionRef) -> Decision:
    """Accept: an open item becomes a paused task; a convention is confirmed and remembered."""
    return accept_suggestion(store, suggestion_ref)


@router.post("/{suggestion_ref}/ignore")
def ignore(store: StoreDep, suggestion_ref: SuggestionRef) -> Decision:
    """Ignore: it comes back only when new evidence appears."""
    return ignore_suggestion(store, suggestion_ref)
