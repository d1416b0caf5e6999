"""Valid answers → graph facts (SPEC REV-2, REV-3, REV-9), with Proctor's own ids.

Identity (REV-3): an entity whose ``candidateRef`` names an offered ``known_N`` gets that
entity's UUID (and keeps its kind, name and, for structural entities, its locator — the
model may only add a description); any other entity gets a fresh UUID. Names never decide
identity: two entities named alike without a candidate ref are two entities.

Events and open items get name-based UUIDs (uuid5) over the versions of the sources they
cite, their kind and title, and their position among identical ones: the same answer for
the same source versions gives the same ids, so publishing a saved batch twice cannot
duplicate them, while a revised source gives new ones.

Every fact's sources are the batch sources it cites; its project is the project of the
first one (or, for a known entity, the entity's own project).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import cast, get_args

from proctor.graph import (
    BatchFacts,
    EntityChangeFact,
    EntityFact,
    EntityKind,
    EventFact,
    ExperienceFact,
    OpenItemFact,
    RelationFact,
    SourceRef,
    StoryLineCandidate,
    StoryLineFact,
    new_entity_id,
)
from proctor.review._batch import BatchSource
from proctor.review._contract import LeafEntity, LeafOutput, MergeOutput
from proctor.review.semantic._render import KnownEntity

SEMANTIC_NAMESPACE = uuid.UUID("8f3c1d52-2b7e-4f0a-b6d4-6c1e9a7d4e21")
"""Namespace of the semantic layer's name-based ids (events, open items)."""
MERGE_KEY_PREFIX = "merge:"
"""Prefixed to the merge's story line keys so they never collide with structural keys."""
_ENTITY_KINDS = frozenset(get_args(EntityKind))


def _dedupe(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


class _Ids:
    """Name-based ids, distinct for identical facts within one answer."""

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    def __call__(self, kind: str, sources: Sequence[BatchSource], title: str) -> str:
        cited = "\x1e".join(f"{s.source_type}:{s.source_id}@{s.fingerprint}" for s in sources)
        name = f"{kind}\x1f{cited}\x1f{title}"
        self._seen[name] += 1
        return str(uuid.uuid5(SEMANTIC_NAMESPACE, f"{name}\x1f{self._seen[name]}"))


def _entity(
    entity: LeafEntity,
    known: KnownEntity | None,
    cited: Sequence[BatchSource],
    refs: tuple[SourceRef, ...],
) -> EntityFact:
    if known is None:
        return EntityFact(
            entity_id=new_entity_id(),
            project_id=cited[0].project_id,
            kind=entity.kind,
            name=entity.name,
            description=entity.description,
            sources=refs,
            layer="semantic",
        )
    kind = known.kind if known.kind in _ENTITY_KINDS else entity.kind
    return EntityFact(
        entity_id=known.entity_id,
        project_id=known.project_id or cited[0].project_id,
        kind=cast(EntityKind, kind),
        name=known.name,
        description=entity.description or known.description,
        sources=refs,
        layer="semantic",
        identity_key=known.identity_key,
    )


def leaf_facts(
    answer: LeafOutput, sources: Mapping[str, BatchSource], known: Mapping[str, KnownEntity]
) -> BatchFacts:
    """The facts of a leaf answer that passed ``check_leaf`` against the same offer."""

    def cited(ids: Sequence[str]) -> tuple[list[BatchSource], tuple[SourceRef, ...]]:
        chosen = [sources[ref] for ref in _dedupe(ids)]
        return chosen, tuple(source.cite() for source in chosen)

    entities: list[EntityFact] = []
    entity_ids: dict[str, str] = {}
    for entity in answer.entities:
        chosen, refs = cited(entity.source_reference_ids)
        known_entity = known[entity.candidate_ref] if entity.candidate_ref else None
        fact = _entity(entity, known_entity, chosen, refs)
        entity_ids[entity.id] = fact.entity_id
        entities.append(fact)

    ids = _Ids()
    events: list[EventFact] = []
    for event in answer.events:
        chosen, refs = cited(event.source_reference_ids)
        times = [s.occurred_at for s in chosen if s.occurred_at is not None]
        events.append(
            EventFact(
                event_id=ids(event.kind, chosen, event.title),
                project_id=chosen[0].project_id,
                kind=event.kind,
                title=event.title,
                summary=event.summary,
                occurred_at=min(times) if times else None,
                conversation_id=chosen[0].conversation_id,
                sources=refs,
                layer="semantic",
                entity_ids=_dedupe(entity_ids[e] for e in event.entity_ids),
            )
        )
    changes = [
        EntityChangeFact(
            entity_id=entity_ids[change.entity_id],
            kind=change.kind,
            description=change.description,
            sources=cited(change.source_reference_ids)[1],
            layer="semantic",
        )
        for change in answer.entity_changes
    ]
    relations = [
        RelationFact(
            from_entity_id=entity_ids[relation.from_id],
            to_entity_id=entity_ids[relation.to_id],
            type=relation.type,
            reason=relation.reason,
            sources=cited(relation.source_reference_ids)[1],
            layer="semantic",
        )
        for relation in answer.relations
    ]
    open_items: list[OpenItemFact] = []
    for item in answer.open_items:
        chosen, refs = cited(item.source_reference_ids)
        open_items.append(
            OpenItemFact(
                key=f"semantic:{ids('open_item', chosen, item.title)}",
                project_id=chosen[0].project_id,
                title=item.title,
                detail=item.detail,
                sources=refs,
                layer="semantic",
                entity_ids=_dedupe(entity_ids[e] for e in item.entity_ids),
            )
        )
    return BatchFacts(
        entities=tuple(entities),
        events=tuple(events),
        changes=tuple(changes),
        relations=tuple(relations),
        open_items=tuple(open_items),
        summary=answer.summary,
        change_digest=answer.change_digest,
    )


def merge_facts(
    answer: MergeOutput,
    events: Mapping[str, EventFact],
    story_lines: Mapping[str, StoryLineCandidate],
) -> tuple[tuple[StoryLineFact, ...], tuple[ExperienceFact, ...], tuple[OpenItemFact, ...]]:
    """Story lines, experiences and open items of a merge answer that passed ``check_merge``."""

    def event_ids(refs: Iterable[str]) -> tuple[str, ...]:
        return _dedupe(events[ref].event_id for ref in refs)

    lines = tuple(
        StoryLineFact(
            key=MERGE_KEY_PREFIX + line.key,
            title=line.title,
            summary=line.summary,
            event_ids=event_ids(line.event_refs),
            story_line_id=(
                story_lines[line.story_line_ref].story_line_id if line.story_line_ref else None
            ),
            parent_key=MERGE_KEY_PREFIX + line.parent_key if line.parent_key else None,
            must_exist=True,
        )
        for line in answer.story_lines
    )
    experiences = tuple(
        ExperienceFact(title=e.title, lesson=e.lesson, event_ids=event_ids(e.event_refs))
        for e in answer.experiences
    )
    open_items: list[OpenItemFact] = []
    seen: Counter[str] = Counter()
    for item in answer.open_items:
        shown = [events[ref] for ref in _dedupe(item.event_refs)]
        name = "\x1e".join(e.event_id for e in shown) + f"\x1f{item.title}"
        seen[name] += 1
        key = uuid.uuid5(SEMANTIC_NAMESPACE, f"merge_open_item\x1f{name}\x1f{seen[name]}")
        open_items.append(
            OpenItemFact(
                key=f"semantic:{key}",
                project_id=shown[0].project_id,
                title=item.title,
                detail=item.detail,
                sources=tuple(dict.fromkeys(ref for e in shown for ref in e.sources)),
                layer="semantic",
                entity_ids=_dedupe(entity for e in shown for entity in e.entity_ids),
            )
        )
    return lines, experiences, tuple(open_items)
