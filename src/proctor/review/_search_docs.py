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
from proctor.search import (
    SearchDocument,
    SourceRef,
    entity_document,
    event_document,
    story_line_document,
)
from proctor.store import derived_id


def _refs(sources: Sequence[FactRef]) -> tuple[SourceRef, ...]:
    return tuple(SourceRef(r.source_type, r.source_id) for r in sources)


def graph_documents(draft: ResultDraft) -> Iterator[SearchDocument]:
    """One document per entity, event and story line the draft publishes."""
    for entity in draft.entities:
        yield entity_document(
            entity.entity_id,
            entity.project_id,
            entity.kind,
            entity.name,
            entity.description,
            _refs(entity.sources),
        )
    for event in draft.events:
        yield event_document(
            event.event_id,
            event.project_id,
            event.title,
            event.summary,
            event.occurred_at,
            _refs(event.sources),
        )
    project_of = {event.event_id: event.project_id for event in draft.events}
    for line in draft.story_lines:
        projects = [project_of[e] for e in line.event_ids if e in project_of]
        yield story_line_document(
            # A new line gets the id the publish gives it.
            line.story_line_id or derived_id("story_line", draft.result_id, line.key),
            projects[0] if projects else draft.project_id,
            line.title,
            line.summary,
        )
