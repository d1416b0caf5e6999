"""What the suggestion part of the store reads and writes (HB-5, HB-6).

``ChangedObject`` is the raw material: one object a result published, with the original
sources behind it. The heartbeat turns those into suggestions (rules, fingerprints,
phrasing); the store saves them (``SuggestionDraft``) and records what a person decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

SuggestionKind = Literal["open_item", "disagreement", "convention", "revision"]
"""What a suggestion is about: an open item, a ``contrasts`` relation, a well-supported
automatic entity, or a revised entity."""

SuggestionStatus = Literal["open", "accepted", "ignored"]

SaveAction = Literal["created", "refreshed", "reopened", "unchanged"]
"""What saving did to one suggestion: new; an open one updated; an ignored one back with
new evidence; an ignored (same evidence) or accepted one left alone."""


@dataclass(frozen=True, slots=True)
class EvidenceRef:
    """One original source behind a suggestion, with the content it had."""

    source_type: str
    source_id: str
    content_hash: str | None
    """The source's current content hash; None when the source was deleted."""


@dataclass(frozen=True, slots=True)
class ChangedObject:
    """One object a result published that may become a suggestion."""

    object_type: Literal["open_item", "relation", "entity", "entity_change"]
    object_id: str
    project_id: str | None
    title: str
    """Open item title, entity name, ``A contrasts B``, or the revised entity's name."""
    detail: str
    """Open item detail, entity description, relation reason, or the change's description."""
    entity_id: str | None
    """The entity it is about (entities, entity changes), else None."""
    entity_kind: str | None
    at: datetime
    """When the object last changed: the newer first when candidates are capped."""
    evidence: tuple[EvidenceRef, ...]
    """Distinct original sources citing the object (by this result or earlier ones), sorted."""


@dataclass(frozen=True, slots=True)
class ResultChanges:
    """The objects of one result that HB-5 takes candidates from."""

    result_id: str
    run_id: str
    project_id: str | None
    open_items: tuple[ChangedObject, ...]
    """Open items the result opened or kept open (still open)."""
    disagreements: tuple[ChangedObject, ...]
    """``contrasts`` relations of the result with no ``supersedes`` between the two entities."""
    conventions: tuple[ChangedObject, ...]
    """Automatic entities of the result with at least ``min_sources`` distinct sources."""
    revisions: tuple[ChangedObject, ...]
    """``revised`` entity changes the result recorded."""


@dataclass(frozen=True, slots=True)
class SuggestionDraft:
    """A suggestion to save: its identity (fingerprint), words and evidence."""

    fingerprint: str
    kind: SuggestionKind
    project_id: str | None
    object_type: str | None
    object_id: str | None
    title: str
    text: str
    rule_text: str
    phrased: bool
    """True when ``text`` came from the phrasing model, False when it is the rule text."""
    evidence: tuple[EvidenceRef, ...]
    evidence_key: str


@dataclass(frozen=True, slots=True)
class SuggestionRecord:
    """A saved suggestion."""

    suggestion_id: str
    fingerprint: str
    kind: SuggestionKind
    project_id: str | None
    object_type: str | None
    object_id: str | None
    result_id: str
    heartbeat_id: str | None
    title: str
    text: str
    rule_text: str
    phrased: bool
    evidence: tuple[EvidenceRef, ...]
    evidence_key: str
    status: SuggestionStatus
    created_at: datetime
    updated_at: datetime
    decided_at: datetime | None


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What one save did, per suggestion (in the order given)."""

    actions: tuple[tuple[str, SaveAction], ...]
    """``(suggestion_id, action)`` per draft."""

    def count(self, action: SaveAction) -> int:
        """How many drafts ended with ``action``."""
        return sum(1 for _, done in self.actions if done == action)


@dataclass(frozen=True, slots=True)
class UserTaskRecord:
    """A task a person took on by accepting an open item (created paused)."""

    task_id: str
    project_id: str | None
    suggestion_id: str | None
    title: str
    detail: str
    status: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """Something a person confirmed to remember (an accepted convention)."""

    memory_id: str
    project_id: str | None
    entity_id: str | None
    suggestion_id: str | None
    text: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Decision:
    """What accepting or ignoring a suggestion did."""

    suggestion: SuggestionRecord
    changed: bool
    """False when it was already decided that way (the call was a no-op)."""
    task: UserTaskRecord | None = None
    memory: MemoryRecord | None = None
    confirmed_entity_id: str | None = None
