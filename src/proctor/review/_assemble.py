"""Saved batches → one result draft: facts deduplicated by identity, open items, story lines.

Identity is by id only (REV-3): the same entity id seen in two batches is one entity
with the sources of both; two entities that merely share a name stay two. The summary
and change digest written here are deterministic (counts); the semantic merge replaces
them when a model is configured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from proctor.graph import (
    BatchFacts,
    Checkpoint,
    Coverage,
    EntityFact,
    EventFact,
    OpenItemFact,
    RelationFact,
    ResultDraft,
    SourceRef,
)
from proctor.review.structural import conversation_story_lines, derive_open_items
from proctor.store import ReviewRunRecord
from proctor.transcript import Conversation

_EARLIEST = datetime.min.replace(tzinfo=UTC)


def assemble_draft(
    *,
    result_id: str,
    run: ReviewRunRecord,
    batches: Sequence[BatchFacts],
    conversations: Mapping[str, Conversation],
    coverage: Coverage,
    checkpoints: tuple[Checkpoint, ...],
) -> ResultDraft:
    """Everything the run's batches found, as one draft ready to publish."""
    entities = _entities(b.entities for b in batches)
    events = _events(e for b in batches for e in b.events)
    relations = _relations(r for b in batches for r in b.relations)
    derived, resolved = derive_open_items(events)
    open_items = _open_items([*derived, *(o for b in batches for o in b.open_items)])
    story_lines = conversation_story_lines(
        [e for e in events if e.conversation_id in conversations], conversations
    )
    return ResultDraft(
        result_id=result_id,
        run_id=run.run_id,
        scope_key=run.scope_key,
        project_id=run.project_id,
        time_from=run.time_from,
        time_to=run.time_to,
        trigger=run.trigger,
        summary=_summary(events, conversations, open_items, coverage),
        change_digest=_digest(entities, events, open_items, resolved),
        coverage=coverage,
        entities=tuple(entities),
        events=tuple(events),
        changes=tuple(c for b in batches for c in b.changes),
        relations=tuple(relations),
        open_items=tuple(open_items),
        resolved_open_item_keys=tuple(k for k in resolved if k not in {o.key for o in open_items}),
        story_lines=tuple(story_lines),
        checkpoints=checkpoints,
    )


def _sources(*groups: Sequence[SourceRef]) -> tuple[SourceRef, ...]:
    return tuple(dict.fromkeys(ref for group in groups for ref in group))


def _entities(groups: Iterable[Sequence[EntityFact]]) -> list[EntityFact]:
    """One fact per entity id. A structural entity keeps its kind, name, locator and layer
    when the model points at it (``known_N``); the model may only add a description."""
    merged: dict[str, EntityFact] = {}
    for group in groups:
        for entity in group:
            known = merged.get(entity.entity_id)
            if known is None:
                merged[entity.entity_id] = entity
                continue
            base = known if known.layer == "structural" or entity.layer != "structural" else entity
            told = [
                e.description for e in (entity, known) if e.layer == "semantic" and e.description
            ]
            merged[entity.entity_id] = replace(
                base,
                description=told[0] if told else base.description,
                sources=_sources(known.sources, entity.sources),
            )
    return list(merged.values())


def _events(events: Iterable[EventFact]) -> list[EventFact]:
    merged: dict[str, EventFact] = {}
    for event in events:
        known = merged.get(event.event_id)
        merged[event.event_id] = (
            event
            if known is None
            else replace(known, sources=_sources(known.sources, event.sources))
        )
    return sorted(merged.values(), key=lambda e: (e.occurred_at or _EARLIEST, e.event_id))


def _relations(relations: Iterable[RelationFact]) -> list[RelationFact]:
    merged: dict[tuple[str, str, str], RelationFact] = {}
    for relation in relations:
        key = (relation.from_entity_id, relation.to_entity_id, relation.type)
        known = merged.get(key)
        merged[key] = (
            relation
            if known is None
            else replace(known, sources=_sources(known.sources, relation.sources))
        )
    return list(merged.values())


def _open_items(items: Sequence[OpenItemFact]) -> list[OpenItemFact]:
    return list({item.key: item for item in items}.values())


def _summary(
    events: Sequence[EventFact],
    conversations: Mapping[str, Conversation],
    open_items: Sequence[OpenItemFact],
    coverage: Coverage,
) -> str:
    kinds = Counter(e.kind for e in events)
    failed = Counter(e.kind for e in events if e.outcome == "failed")
    parts = [
        f"{count} {kind.replace('_', ' ')}{'' if count == 1 else 's'}"
        + (f" ({failed[kind]} failed)" if failed[kind] else "")
        for kind, count in kinds.most_common()
    ]
    text = (
        f"Read {coverage.sources_read} of {coverage.sources_total} sources in "
        f"{len(conversations)} conversation(s): "
        + (", ".join(parts) if parts else "no structural events")
        + "."
    )
    if open_items:
        text += f" {len(open_items)} open item(s): " + "; ".join(o.title for o in open_items[:5])
        text += "." if len(open_items) <= 5 else " …"
    return text


def _digest(
    entities: Sequence[EntityFact],
    events: Sequence[EventFact],
    open_items: Sequence[OpenItemFact],
    resolved: Sequence[str],
) -> str:
    kinds = Counter(e.kind for e in entities)
    seen = ", ".join(f"{n} {kind}(s)" for kind, n in kinds.most_common()) or "no entities"
    return (
        f"{len(events)} event(s) involving {seen}; {len(open_items)} open item(s) reported, "
        f"{len(resolved)} checked for resolution."
    )
