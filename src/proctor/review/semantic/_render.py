"""What a leaf or merge call sees: the data lines of its untrusted block, and what ids mean.

A leaf sees, as encoded JSON lines (``supervisor._block``): the batch's conversations
(``c1`` …), up to four background notes (REV-7b: context, never citable), the known
entities (``known_1`` …, REV-3) and the sources (``s1`` … — the batch's own refs), each
with the structural facts that cite it (REV-13: given, not re-derived). Sources are
rendered like the supervisor's window entries (same renderer: visible fields only,
redacted once more, long texts cut to head and tail with a marker) and the whole batch is
bounded by ``RenderLimits.sources_chars``.

Known entities are the batch's own structural entities first — they are the most recently
updated of all, and offering them lets a decision point at the file or command it is about
instead of inventing a second entity for it — then the candidates in the order the
pipeline gave them (most recently updated first), at most ``MAX_CANDIDATES`` in all.

A merge sees the review's scope, each leaf's summary (``b1`` …), the events (``ev1`` …)
and the existing story lines (``line_1`` …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from proctor.graph import BatchFacts, EntityCandidate, EventFact, SourceRef, StoryLineCandidate
from proctor.review._batch import BatchSource, SourceBatch
from proctor.review._contract import MAX_CANDIDATES
from proctor.review.semantic._types import (
    BACKGROUND_CHARS,
    MAX_BACKGROUND,
    BackgroundNote,
    RenderLimits,
)
from proctor.supervisor import Renderer, encode_line

_FLOORS = RenderLimits(
    message_chars=400, argument_chars=120, output_chars=240, event_chars=120, sources_chars=4_000
)
"""Per-source limits never shrink below these, however large the batch."""
_SHRINK_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class KnownEntity:
    """An entity offered as ``known_N``: what the ref maps to inside Proctor."""

    ref: str
    entity_id: str
    project_id: str | None
    kind: str
    name: str
    description: str
    identity_key: str | None = None
    """Set for the batch's structural entities (their exact locator)."""


@dataclass(frozen=True, slots=True)
class LeafView:
    """A leaf call's data lines and the meaning of the ids in them."""

    lines: tuple[str, ...]
    sources: Mapping[str, BatchSource]
    """Citable refs (``s1`` …) → the batch source."""
    known: Mapping[str, KnownEntity]
    """Offered candidate refs (``known_1`` …) → the entity."""


@dataclass(frozen=True, slots=True)
class MergeView:
    """A merge call's data lines and the meaning of the ids in them."""

    lines: tuple[str, ...]
    events: Mapping[str, EventFact]
    """``ev1`` … → the event."""
    story_lines: Mapping[str, StoryLineCandidate]
    """``line_1`` … → the existing story line."""


def _time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ") if value is not None else None


def _offers(structural: BatchFacts, candidates: Sequence[EntityCandidate]) -> list[KnownEntity]:
    """The batch's structural entities, then the candidates; each entity once, 100 at most."""
    pending = [
        *(
            (e.entity_id, e.project_id, e.kind, e.name, e.description, e.identity_key)
            for e in structural.entities
        ),
        *((c.entity_id, c.project_id, c.kind, c.name, c.description, None) for c in candidates),
    ]
    offers: dict[str, KnownEntity] = {}
    for entity_id, project_id, kind, name, description, identity_key in pending:
        if entity_id not in offers and len(offers) < MAX_CANDIDATES:
            ref = f"known_{len(offers) + 1}"
            offers[entity_id] = KnownEntity(
                ref, entity_id, project_id, kind, name, description, identity_key
            )
    return list(offers.values())


def _known(
    structural: BatchFacts,
    candidates: Sequence[EntityCandidate],
    renderer: Renderer,
    limits: RenderLimits,
    budget: int,
) -> tuple[list[str], dict[str, KnownEntity]]:
    lines: list[str] = []
    known: dict[str, KnownEntity] = {}
    used = 0
    for offer in _offers(structural, candidates):
        entry: dict[str, Any] = {
            "id": offer.ref,
            "type": "known",
            "kind": offer.kind,
            "name": renderer.text(offer.name, 200)[0],
        }
        if offer.description:
            description = renderer.text(offer.description, limits.known_description_chars)[0]
            entry["description"] = description
        line = encode_line(entry)
        if used + len(line) > budget:
            break
        used += len(line)
        lines.append(line)
        known[offer.ref] = offer
    return lines, known


def _facts_by_ref(
    batch: SourceBatch, structural: BatchFacts, renderer: Renderer, limits: RenderLimits
) -> dict[str, list[str]]:
    """Each structural event and open item, shown beside the first batch source it cites."""
    refs: dict[tuple[str, str], str] = {(s.source_type, s.source_id): s.ref for s in batch.sources}
    notes: dict[str, list[str]] = {}

    def attach(sources: Sequence[SourceRef], note: str) -> None:
        for source in sources:
            ref = refs.get((source.source_type, source.source_id))
            if ref is not None:
                notes.setdefault(ref, []).append(renderer.text(note, limits.fact_chars)[0])
                return

    for event in structural.events:
        outcome = f" {event.outcome}" if event.outcome != "unknown" else ""
        attach(event.sources, f"{event.kind}{outcome}: {event.title}")
    for item in structural.open_items:
        attach(item.sources, f"open: {item.title}")
    return notes


def _source_entry(source: BatchSource, renderer: Renderer, limits: RenderLimits) -> dict[str, Any]:
    if source.message is not None:
        return renderer.message(source.ref, source.message, limits.message_chars)[0]
    if source.tool_call is not None:
        return renderer.tool_call(
            source.ref,
            source.tool_call,
            argument_chars=limits.argument_chars,
            output_chars=limits.output_chars,
        )[0]
    if source.task_event is not None:
        return renderer.task_event(source.ref, source.task_event, limits.event_chars)[0]
    return {"id": source.ref, "type": source.source_type}


def _source_lines(
    batch: SourceBatch,
    notes: Mapping[str, list[str]],
    conversations: Mapping[str, str],
    renderer: Renderer,
    limits: RenderLimits,
) -> list[str]:
    lines: list[str] = []
    for source in batch.sources:
        entry = _source_entry(source, renderer, limits)
        if len(conversations) > 1:
            entry["conv"] = conversations[source.conversation_id]
        if source.ref in notes:
            entry["facts"] = notes[source.ref]
        lines.append(encode_line(entry))
    return lines


def _shrunk(limits: RenderLimits, scale: float) -> RenderLimits:
    def bounded(value: int, floor: int) -> int:
        return max(floor, int(value * scale))

    return replace(
        limits,
        message_chars=bounded(limits.message_chars, _FLOORS.message_chars),
        argument_chars=bounded(limits.argument_chars, _FLOORS.argument_chars),
        output_chars=bounded(limits.output_chars, _FLOORS.output_chars),
        event_chars=bounded(limits.event_chars, _FLOORS.event_chars),
    )


def _conversation_lines(batch: SourceBatch, renderer: Renderer) -> tuple[list[str], dict[str, str]]:
    ids: dict[str, str] = {}
    lines: list[str] = []
    for source in batch.sources:
        if source.conversation_id in ids:
            continue
        ids[source.conversation_id] = local = f"c{len(ids) + 1}"
        entry: dict[str, Any] = {"id": local, "type": "conversation"}
        conversation = batch.conversations.get(source.conversation_id)
        if conversation is not None and conversation.title:
            entry["title"] = renderer.text(conversation.title, 200)[0]
        project = batch.projects.get(source.project_id)
        if project:
            entry["project"] = renderer.text(project, 200)[0]
        lines.append(encode_line(entry))
    return lines, ids


def _background_lines(background: Sequence[BackgroundNote | str], renderer: Renderer) -> list[str]:
    lines: list[str] = []
    for item in background[:MAX_BACKGROUND]:
        note = item if isinstance(item, BackgroundNote) else BackgroundNote(item)
        entry: dict[str, Any] = {"type": "background"}
        if note.updated_at is not None:
            entry["updated_at"] = _time(note.updated_at)
        entry["text"] = renderer.text(note.text, BACKGROUND_CHARS)[0]
        lines.append(encode_line(entry))
    return lines


def leaf_view(
    batch: SourceBatch,
    structural: BatchFacts,
    candidates: Sequence[EntityCandidate],
    background: Sequence[BackgroundNote | str],
    limits: RenderLimits,
) -> LeafView:
    """The data a leaf call sees for ``batch``, within ``limits``."""
    renderer = Renderer()
    conversation_lines, conversations = _conversation_lines(batch, renderer)
    notes = _facts_by_ref(batch, structural, renderer, limits)
    chosen = limits
    sources = _source_lines(batch, notes, conversations, renderer, chosen)
    for _ in range(_SHRINK_ROUNDS):
        total = sum(len(line) + 1 for line in sources)
        if total <= limits.sources_chars or chosen == _shrunk(chosen, 0.0):
            break
        chosen = _shrunk(chosen, limits.sources_chars / total * 0.9)
        sources = _source_lines(batch, notes, conversations, renderer, chosen)
    # Known entities may take a share of what the sources take, so a batch of short
    # messages is not drowned in candidates (input ≤ 1.5 × the transcript's own size).
    source_chars = sum(len(line) + 1 for line in sources)
    known_budget = min(
        limits.known_chars, max(limits.known_min_chars, int(source_chars * limits.known_share))
    )
    known_lines, known = _known(structural, candidates, renderer, limits, known_budget)
    lines = [
        *conversation_lines,
        *_background_lines(background, renderer),
        *known_lines,
        *sources,
    ]
    return LeafView(tuple(lines), {s.ref: s for s in batch.sources}, known)


def merge_view(
    leaves: Sequence[BatchFacts],
    events: Sequence[EventFact],
    story_lines: Sequence[StoryLineCandidate],
    scope_label: str,
    limits: RenderLimits,
) -> MergeView:
    """The data a merge call sees: scope, leaf summaries, events, existing story lines."""
    renderer = Renderer()
    lines = [encode_line({"type": "scope", "label": renderer.text(scope_label, 300)[0]})]
    number = 0
    for leaf in leaves:
        if not (leaf.summary or leaf.change_digest):
            continue
        number += 1
        entry: dict[str, Any] = {"id": f"b{number}", "type": "leaf"}
        entry["summary"] = renderer.text(leaf.summary, limits.leaf_summary_chars)[0]
        if leaf.change_digest:
            entry["changes"] = renderer.text(leaf.change_digest, 300)[0]
        lines.append(encode_line(entry))
    conversations: dict[str, str] = {}
    offered_events: dict[str, EventFact] = {}
    for event in events[: limits.merge_events]:
        ref = f"ev{len(offered_events) + 1}"
        offered_events[ref] = event
        conversation = conversations.setdefault(event.conversation_id, f"c{len(conversations) + 1}")
        entry = {"id": ref, "type": "event", "kind": event.kind}
        entry["title"] = renderer.text(event.title, 200)[0]
        if event.occurred_at is not None:
            entry["time"] = _time(event.occurred_at)
        entry["conv"] = conversation
        if event.outcome != "unknown":
            entry["outcome"] = event.outcome
        lines.append(encode_line(entry))
    offered_lines = {
        f"line_{n}": line for n, line in enumerate(story_lines[: limits.merge_story_lines], 1)
    }
    ref_of = {line.story_line_id: ref for ref, line in offered_lines.items()}
    for ref, line in offered_lines.items():
        entry = {"id": ref, "type": "story_line", "title": renderer.text(line.title, 200)[0]}
        if line.summary:
            entry["summary"] = renderer.text(line.summary, 300)[0]
        if line.parent_id is not None and line.parent_id in ref_of:
            entry["parent"] = ref_of[line.parent_id]
        lines.append(encode_line(entry))
    return MergeView(tuple(lines), offered_events, offered_lines)
