"""Suggestions: list, show, accept, ignore (HB-5, HB-6).

Accepting an open item makes a paused task; accepting a convention confirms its entity
and records a memory. Both actions are idempotent; deciding the other way is refused.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query

from proctor._util.text import one_line
from proctor.api._base_models import WireModel
from proctor.api._deps import Limit, Offset, ReaderDep, StoreDep
from proctor.api._heartbeat_models import SuggestionPage
from proctor.errors import NotFoundError
from proctor.store import (
    Decision,
    EvidenceRef,
    MemoryRecord,
    ReadStore,
    SuggestionRecord,
    SuggestionStatus,
    UserTaskRecord,
)

router = APIRouter(prefix="/suggestions", tags=["heartbeat"])

SuggestionRef = Annotated[
    str, Path(min_length=1, max_length=200, description="A suggestion id or unique prefix.")
]


@router.get("")
def list_suggestions(
    store: ReaderDep,
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
def show_suggestion(store: ReaderDep, suggestion_ref: SuggestionRef) -> SuggestionRecord:
    """One suggestion with its evidence."""
    return store.suggestion(suggestion_ref)


EXCERPT_CHARS = 300
"""How much of each evidence source the changes behind a suggestion quote."""
EVIDENCE_SHOWN = 20
"""At most this many evidence sources are quoted (``evidence_total`` counts them all)."""
_MADE_SCAN = 500
"""Tasks and memories read to find the ones a suggestion made."""


class EvidenceSource(WireModel):
    """One source behind a suggestion, quoted as it reads now."""

    source_type: str
    source_id: str
    exists: bool
    """False when the source was deleted since (its conversation is gone)."""
    conversation_id: str | None = None
    title: str = ""
    excerpt: str = ""
    occurred_at: datetime | None = None


class SuggestionChanges(WireModel):
    """What a suggestion stands on and what accepting it made (HB-5: nothing write-only)."""

    suggestion_id: str
    result_id: str
    """The published result whose changes it was made from."""
    object_type: str | None
    object_id: str | None
    """The graph object (open item, entity, relation, entity change) behind it."""
    why: str
    """The rule's own words: why this is suggested."""
    evidence: list[EvidenceSource]
    evidence_total: int
    task: UserTaskRecord | None = None
    """The paused task accepting it made (an open item)."""
    memory: MemoryRecord | None = None
    """The memory accepting it recorded (a convention)."""


def _evidence(store: ReadStore, ref: EvidenceRef) -> EvidenceSource:
    try:
        source = store.source_text(ref.source_type, ref.source_id)
    except NotFoundError:
        return EvidenceSource(source_type=ref.source_type, source_id=ref.source_id, exists=False)
    excerpt = one_line(source.text, EXCERPT_CHARS)
    return EvidenceSource(
        source_type=ref.source_type,
        source_id=ref.source_id,
        exists=True,
        conversation_id=source.conversation_id,
        title=source.title,
        excerpt=excerpt,
        occurred_at=source.occurred_at,
    )


@router.get("/{suggestion_ref}/changes")
def suggestion_changes(store: ReaderDep, suggestion_ref: SuggestionRef) -> SuggestionChanges:
    """The changes behind one suggestion: its graph object, its evidence quoted, and the
    task or memory accepting it made."""
    found = store.suggestion(suggestion_ref)
    task = None
    memory = None
    if found.status == "accepted":
        task = next(
            (
                t
                for t in store.user_tasks(limit=_MADE_SCAN)
                if t.suggestion_id == found.suggestion_id
            ),
            None,
        )
        memory = next(
            (m for m in store.memories(limit=_MADE_SCAN) if m.suggestion_id == found.suggestion_id),
            None,
        )
    return SuggestionChanges(
        suggestion_id=found.suggestion_id,
        result_id=found.result_id,
        object_type=found.object_type,
        object_id=found.object_id,
        why=found.rule_text,
        evidence=[_evidence(store, ref) for ref in found.evidence[:EVIDENCE_SHOWN]],
        evidence_total=len(found.evidence),
        task=task,
        memory=memory,
    )


@router.post("/{suggestion_ref}/accept")
def accept(store: StoreDep, suggestion_ref: SuggestionRef) -> Decision:
    """Accept: an open item becomes a paused task; a convention is confirmed and remembered."""
    from proctor.heartbeat.suggestions import accept_suggestion

    return accept_suggestion(store, suggestion_ref)


@router.post("/{suggestion_ref}/ignore")
def ignore(store: StoreDep, suggestion_ref: SuggestionRef) -> Decision:
    """Ignore: it comes back only when new evidence appears."""
    from proctor.heartbeat.suggestions import ignore_suggestion

    return ignore_suggestion(store, suggestion_ref)
