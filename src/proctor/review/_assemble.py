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
from typing import TypeVar

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
from proctor.review.structural import (
    conversation_story_lines,
    derive_open_items,
    gather_episodes,
)
from proctor.store import ReviewRunRecord
from proctor.transcript import Conversation

_EARLIEST = datetime.min.replace(tzinfo=UTC)

_Fact = TypeVar("_Fact", EntityFact, EventFact, RelationFact)


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
    # In the order the batches recorded them: a conversation without times is told so.
    episodes = gather_episodes([e for b in batches for e in b.events], conversations)
    events = _events(episodes.events)
    relations = _relations(r for b in batches for r in b.relations)
    derived, resolved = derive_open_items(events)
    open_items = _open_items([*derived, *(o for b in batches for o in b.open_items)])
    story_lines = conversation_story_lines(
        [e for e in events if e.conversation_id in conversations], conversations
    ) + list(episodes.lines)
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


class _SourcePool:
    """The sources of facts merged by id, in first-seen order, gathered once per id.

    Merging grew each fact's source tuple again for every batch that named it again: a
    file touched in every batch cost the square of its references.
    """

    def __init__(self) -> None:
        self._refs: dict[object, dict[SourceRef, None]] = {}

    def add(self, key: object, known: Sequence[SourceRef], more: Sequence[SourceRef]) -> None:
        """``key``'s fact, which had ``known`` sources, is merged with one citing ``more``."""
        pool = self._refs.get(key)
        if pool is None:
            pool = self._refs[key] = dict.fromkeys(known)
        pool.update(dict.fromkeys(more))

    def settle(self, key: object, fact: _Fact) -> _Fact:
        """``fact`` with every source merged into ``key`` (unchanged if never merged)."""
        pool = self._refs.get(key)
        return fact if pool is None else replace(fact, sources=tuple(pool))


def _entities(groups: Iterable[Sequence[EntityFact]]) -> list[EntityFact]:
    """One fact per entity id. A structural entity keeps its kind, name, locator and layer
    when the model points at it (``known_N``); the model may only add a description."""
    merged: dict[str, EntityFact] = {}
    pool = _SourcePool()
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
            pool.add(entity.entity_id, known.sources, entity.sources)
            merged[entity.entity_id] = replace(
                base, description=told[0] if told else base.description
            )
    return [pool.settle(key, fact) for key, fact in merged.items()]


def _events(events: Iterable[EventFact]) -> list[EventFact]:
    merged: dict[str, EventFact] = {}
    pool = _SourcePool()
    for event in events:
        known = merged.get(event.event_id)
        if known is None:
            merged[event.event_id] = event
        else:
            pool.add(event.event_id, known.sources, event.sources)
    settled = [pool.settle(key, fact) for key, fact in merged.items()]
    return sorted(settled, key=lambda e: (e.occurred_at or _EARLIEST, e.event_id))


def _relations(relations: Iterable[RelationFact]) -> list[RelationFact]:
    merged: dict[tuple[str, str, str], RelationFact] = {}
    pool = _SourcePool()
    for relation in relations:
        key = (relation.from_entity_id, relation.to_entity_id, relation.type)
        known = merged.get(key)
        if known is None:
            merged[key] = relation
        else:
            pool.add(key, known.sources, relation.sources)
    return [pool.settle(key, fact) for key, fact in merged.items()]


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
        _counted(count, kind.replace("_", " "))
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


def _counted(count: int, noun: str) -> str:
    """``1 file edit``, ``2 file edits``, ``2 task statuses``, ``3 url fetches``."""
    if count == 1:
        return f"{count} {noun}"
    ending = "es" if noun.endswith(("s", "sh", "ch", "x", "z")) else "s"
    return f"{count} {noun}{ending}"


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
