"""Collecting one batch's structural facts: entities merged by identity, events by source.

The same file read five times in a batch is one entity citing five sources; the same
tool call always yields the same event ids (``structural_event_id`` of the call and a
part naming what the event is about), so a re-read batch reproduces its facts exactly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
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


_Sighting = tuple[str, EntityKind, str, str, str]
"""An entity's project, kind, name, description and identity key, as first seen."""


class FactBuilder:
    """Entities, events and relations of one batch, deduplicated as they are added.

    An entity or relation seen again only gains sources: its first sighting's fields are
    kept and its sources gathered in the order seen, and each fact is built once, by
    :meth:`facts` (a batch names the same file or command many times)."""

    def __init__(self) -> None:
        self._entities: dict[str, tuple[_Sighting, dict[SourceRef, None]]] = {}
        """An entity's first sighting and every source seen."""
        self._events: dict[str, EventFact] = {}
        self._relations: dict[tuple[str, str, RelationType], tuple[str, dict[SourceRef, None]]] = {}
        """A relation's first reason and every source seen."""
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
            first = (source.project_id, kind, name, description, identity_key)
            self._entities[entity_id] = (first, dict.fromkeys(refs))
        else:
            known[1].update(dict.fromkeys(refs))
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
            self._relations[key] = (reason, dict.fromkeys(refs))
        else:
            known[1].update(dict.fromkeys(refs))

    def facts(self, *, summary: str, change_digest: str) -> BatchFacts:
        """Everything collected, as the batch's structural facts."""
        return BatchFacts(
            entities=tuple(
                EntityFact(
                    entity_id, project, kind, name, description, tuple(refs), "structural", key
                )
                for entity_id, ((project, kind, name, description, key), refs) in (
                    self._entities.items()
                )
            ),
            events=tuple(self._events.values()),
            relations=tuple(
                RelationFact(from_id, to_id, relation_type, reason, tuple(refs), "structural")
                for (from_id, to_id, relation_type), (reason, refs) in self._relations.items()
            ),
            summary=summary,
            change_digest=change_digest,
        )
