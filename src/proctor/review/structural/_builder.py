"""Collecting one batch's structural facts: entities merged by identity, events by source.

The same file read five times in a batch is one entity citing five sources; the same
tool call always yields the same event ids (``structural_event_id`` of the call and a
part naming what the event is about), so a re-read batch reproduces its facts exactly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from proctor.graph import (
    BatchFacts,
    EntityFact,
    EntityKind,
    EventFact,
    EventKind,
    EventOutcome,
    RelationFact,
    RelationType,
    SourceRef,
    structural_entity_id,
    structural_event_id,
)
from proctor.review._batch import BatchSource

Outcome = EventOutcome
"""How a call, run or event turned out (the graph's ``EventOutcome``)."""


def _merged(*groups: Sequence[SourceRef]) -> tuple[SourceRef, ...]:
    return tuple(dict.fromkeys(ref for group in groups for ref in group))


class FactBuilder:
    """Entities, events and relations of one batch, deduplicated as they are added."""

    def __init__(self) -> None:
        self._entities: dict[str, EntityFact] = {}
        self._events: dict[str, EventFact] = {}
        self._relations: dict[tuple[str, str, str], RelationFact] = {}
        self._entity_ids: dict[tuple[str, str, str], str] = {}
        """Entity ids already derived (the same file or package recurs across a batch)."""
        self.changed_files: dict[str, set[str]] = defaultdict(set)
        """File identities edited or created so far, by conversation (for commit relations)."""

    def entity(
        self,
        source: BatchSource,
        kind: EntityKind,
        identity_key: str,
        *,
        name: str,
        description: str,
        refs: Sequence[SourceRef],
    ) -> str:
        """The id of the entity ``identity_key`` names in the source's project; adds ``refs``."""
        identity = (source.project_id, kind, identity_key)
        entity_id = self._entity_ids.get(identity)
        if entity_id is None:
            entity_id = self._entity_ids[identity] = structural_entity_id(*identity)
        known = self._entities.get(entity_id)
        if known is None:
            self._entities[entity_id] = EntityFact(
                entity_id=entity_id,
                project_id=source.project_id,
                kind=kind,
                name=name,
                description=description,
                sources=_merged(refs),
                layer="structural",
                identity_key=identity_key,
            )
        else:
            self._entities[entity_id] = replace(known, sources=_merged(known.sources, refs))
        return entity_id

    def event(
        self,
        source: BatchSource,
        kind: EventKind,
        *,
        part: str = "",
        title: str,
        summary: str,
        refs: Sequence[SourceRef],
        entity_ids: Sequence[str] = (),
        outcome: Outcome = "unknown",
        occurred_at: datetime | None = None,
    ) -> str:
        """Record an event of ``source``; ``part`` tells apart several events of one kind."""
        event_id = structural_event_id(kind, source.source_type, source.source_id, part)
        self._events[event_id] = EventFact(
            event_id=event_id,
            project_id=source.project_id,
            kind=kind,
            title=title,
            summary=summary,
            occurred_at=occurred_at or source.occurred_at,
            conversation_id=source.conversation_id,
            sources=_merged(refs) or (source.cite(),),
            layer="structural",
            entity_ids=tuple(dict.fromkeys(entity_ids)),
            outcome=outcome,
        )
        return event_id

    def relation(
        self,
        from_entity_id: str,
        to_entity_id: str,
        relation_type: RelationType,
        *,
        reason: str,
        refs: Sequence[SourceRef],
    ) -> None:
        """A relation structure proves; the same triple twice keeps both sources."""
        key = (from_entity_id, to_entity_id, relation_type)
        known = self._relations.get(key)
        if known is None:
            self._relations[key] = RelationFact(
                from_entity_id, to_entity_id, relation_type, reason, _merged(refs), "structural"
            )
        else:
            self._relations[key] = replace(known, sources=_merged(known.sources, refs))

    def facts(self, *, summary: str, change_digest: str) -> BatchFacts:
        """Everything collected, as the batch's structural facts."""
        return BatchFacts(
            entities=tuple(self._entities.values()),
            events=tuple(self._events.values()),
            relations=tuple(self._relations.values()),
            summary=summary,
            change_digest=change_digest,
        )
