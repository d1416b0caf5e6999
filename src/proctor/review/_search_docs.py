"""A published result's graph objects as search documents (REV-14).

Entities, events and story lines become searchable as soon as their result is
published: their documents are written for full text in the publish transaction, and get
their sentence embeddings afterwards with the sources' (``proctor.search.embed_pending``;
a large structural review would otherwise hold its publish for minutes embedding titles).
A story line the merge both continues and the structural layer re-derives appears twice
in a draft; the index keeps the last, as the publish does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from proctor.graph import ResultDraft
from proctor.graph import SourceRef as FactRef
from proctor.search import SearchDocument, SourceRef
from proctor.store._graph_rows import derived_id

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
    project_of = {event.event_id: event.project_id for event in draft.events}
    for line in draft.story_lines:
        projects = [project_of[e] for e in line.event_ids if e in project_of]
        yield SearchDocument(
            doc_type="story_line",
            # A new line gets the id the publish gives it.
            doc_id=line.story_line_id or derived_id("story_line", draft.result_id, line.key),
            project_id=projects[0] if projects else draft.project_id,
            title=line.title,
            text=line.summary,
            occurred_at=None,
        )
