"""A published result's graph objects as search documents (REV-14).

Entities, events and story lines become searchable as soon as their result is
published. They are indexed by full text at publish time; sentence embeddings stay with
the sources (a large structural review would otherwise spend minutes embedding titles).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from proctor.graph import ResultDraft
from proctor.graph import SourceRef as FactRef
from proctor.search import SearchDocument, SourceRef

_MAX_REFS = 5


def _refs(sources: Sequence[FactRef]) -> tuple[SourceRef, ...]:
    return tuple(SourceRef(r.source_type, r.source_id) for r in sources[:_MAX_REFS])


def graph_documents(draft: ResultDraft) -> Iterator[SearchDocument]:
    """One document per entity, event and story line the draft publishes."""
    for entity in draft.entities:
        yield SearchDocument(
            doc_type="entity",
            doc_id=entity.entity_id,
            project_id=entity.project_id,
            title=entity.name,
            text=f"{entity.kind} {entity.name}: {entity.description}",
            occurred_at=None,
            source_refs=_refs(entity.sources),
        )
    for event in draft.events:
        yield SearchDocument(
            doc_type="event",
            doc_id=event.event_id,
            project_id=event.project_id,
            title=event.title,
            text=event.summary,
            occurred_at=event.occurred_at,
            source_refs=_refs(event.sources),
        )
    for line in draft.story_lines:
        if line.story_line_id is None:
            continue
        yield SearchDocument(
            doc_type="story_line",
            doc_id=line.story_line_id,
            project_id=draft.project_id,
            title=line.title,
            text=line.summary,
            occurred_at=None,
        )
