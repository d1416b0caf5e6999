"""The story graph's facts as a review produces them, before they are published.

Both layers of a review speak this language: the structural extractor (exact facts read
from structure, SPEC REV-13) and the semantic layer (the model's leaf outputs, REV-2,
after candidate refs were mapped to entity ids, REV-3). A ``ResultDraft`` gathers them
for one publish transaction (REV-1, REV-8).

Identity (REV-3): every entity has a UUID. A structural entity's UUID is derived from an
exact locator — a normalised file path, a URL, ``package@ecosystem``, a commit hash, a
command line — inside its project (``identity_key``); the same locator is the same
thing. A semantic entity gets a new random UUID unless the model chose a candidate ref
that maps to an existing one. Display names never decide identity.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha1
from typing import TYPE_CHECKING, Any, Literal

from proctor.graph._manifest_policy import ReviewTrigger

if TYPE_CHECKING:
    from pydantic import TypeAdapter

EntityKind = Literal[
    "file",
    "command",
    "test",
    "package",
    "url",
    "commit",
    "error",
    "agent",
    "task",
    "component",
    "concept",
    "decision",
    "convention",
    "person",
    "other",
]
"""What an entity is. The first nine come from structure; the rest need judgement."""

STRUCTURAL_KINDS: frozenset[str] = frozenset(
    {"file", "command", "test", "package", "url", "commit", "error", "agent", "task"}
)

EventKind = Literal[
    "file_read",
    "file_edit",
    "file_create",
    "command",
    "test_run",
    "error",
    "package_install",
    "url_fetch",
    "commit",
    "subagent_run",
    "task_status",
    "episode",
    "decision",
    "discussion",
    "milestone",
    "other",
]
"""What happened. The structural extractor uses the first twelve: an ``episode`` is a user's
request and the work it caused (``review/structural/_episodes.py``)."""

RelationType = Literal[
    "relates_to",
    "part_of",
    "depends_on",
    "uses",
    "modifies",
    "tests",
    "causes",
    "fixes",
    "blocks",
    "supersedes",
    "contrasts",
]
"""How two entities relate; ``contrasts`` marks a disagreement (REV-2)."""

ChangeKind = Literal["proposed", "supplemented", "verified", "revised"]
"""What a review says happened to an entity (REV-2 ``entityChanges``)."""

Layer = Literal["structural", "semantic"]

ObjectState = Literal["automatic", "confirmed", "revised", "removed"]
"""Who owns an object: automatic runs may change only ``automatic`` ones (REV-4)."""

RelationState = Literal["automatic", "confirmed", "revised", "revoked"]
"""A removed relation is ``revoked`` and never recreated by later runs (REV-4)."""

EventOutcome = Literal["ok", "failed", "unknown"]
"""How an event (a test run, a command, an episode) turned out, when the review can tell."""

OpenItemStatus = Literal["open", "resolved"]
"""An open item stays ``open`` until a later result sees it resolved."""

GraphObjectType = Literal["entity", "relation", "entity_change"]
"""The graph objects a person may edit (REV-4)."""

EditAction = Literal["confirm", "revise", "remove"]
"""What a person did to a graph object (REV-4)."""

NeedsReviewStatus = Literal["open", "dismissed"]
"""A difference between an automatic proposal and a person's edit: waiting, or seen."""

_IDENTITY_NAMESPACE = uuid.UUID("5b0f2c7e-7d7a-4c5e-9a51-1f6f0c7d2b10")
_IDENTITY_PREFIX = _IDENTITY_NAMESPACE.bytes


def _identity_uuid(name: str) -> str:
    """``str(uuid.uuid5(_IDENTITY_NAMESPACE, name))`` without a ``UUID`` object between.

    The same RFC 4122 steps (SHA-1 of the namespace's bytes and the UTF-8 name, its first
    16 bytes with version 5 and the variant set, written 8-4-4-4-12), at a third of the
    cost: a first review derives one for every structural event and entity (~40,000 on
    the 200 MB bench store).
    """
    digest = bytearray(sha1(_IDENTITY_PREFIX + name.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    hexed = digest.hex()
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def structural_entity_id(project: str, kind: str, identity_key: str) -> str:
    """The UUID of a structural entity: the same locator in a project is the same entity."""
    return _identity_uuid(f"{project}\x1f{kind}\x1f{identity_key}")


def structural_event_id(kind: str, source_type: str, source_id: str, part: str = "") -> str:
    """The UUID of a structural event: the same source yields the same event in every run."""
    return _identity_uuid(f"event\x1f{kind}\x1f{source_type}\x1f{source_id}\x1f{part}")


def new_entity_id() -> str:
    """A fresh UUID for an entity no candidate ref pointed at."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where a fact comes from: one stored source, optionally a character range in a field."""

    source_type: str
    """``message``, ``tool_call``, ``task_event`` … as in the ``sources`` table."""
    source_id: str
    field: str | None = None
    """e.g. ``text``, ``result_text``, ``arguments.command``."""
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class EntityFact:
    """An entity a review saw, with the sources that show it."""

    entity_id: str
    project_id: str
    kind: EntityKind
    name: str
    description: str
    sources: tuple[SourceRef, ...]
    layer: Layer
    identity_key: str | None = None
    """Exact locator for structural entities (see the module docstring); None otherwise."""


@dataclass(frozen=True, slots=True)
class EventFact:
    """Something that happened, at a time, involving entities."""

    event_id: str
    """Structural events derive it from their source (the same source, the same event)."""
    project_id: str
    kind: EventKind
    title: str
    summary: str
    occurred_at: datetime | None
    conversation_id: str
    sources: tuple[SourceRef, ...]
    layer: Layer
    entity_ids: tuple[str, ...] = ()
    outcome: EventOutcome = "unknown"


@dataclass(frozen=True, slots=True)
class EntityChangeFact:
    """A change to an entity that this review saw (proposed, supplemented, verified, revised)."""

    entity_id: str
    kind: ChangeKind
    description: str
    sources: tuple[SourceRef, ...]
    layer: Layer


@dataclass(frozen=True, slots=True)
class RelationFact:
    """A typed, reasoned link between two entities."""

    from_entity_id: str
    to_entity_id: str
    type: RelationType
    reason: str
    sources: tuple[SourceRef, ...]
    layer: Layer


@dataclass(frozen=True, slots=True)
class OpenItemFact:
    """Something left unresolved, e.g. a failure never followed by a success."""

    key: str
    """Stable across runs (kind + the locator it is about), so it is reported once."""
    project_id: str
    title: str
    detail: str
    sources: tuple[SourceRef, ...]
    layer: Layer
    entity_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StoryLineFact:
    """A thread of events; ``parent_key`` makes it a sub-thread (REV-9)."""

    key: str
    """Names the story line within the draft; maps to an existing one via ``story_line_id``."""
    title: str
    summary: str
    event_ids: tuple[str, ...]
    story_line_id: str | None = None
    """An existing story line chosen by the merge (re-checked at publish, REV-9), else new."""
    parent_key: str | None = None
    must_exist: bool = True
    """False for deterministic lines (one per conversation): ``story_line_id`` is then
    created when missing instead of failing the publish."""


@dataclass(frozen=True, slots=True)
class ExperienceFact:
    """A lesson, linked to the events that formed it (REV-9)."""

    title: str
    lesson: str
    event_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Coverage:
    """What a result covers (REV-10): partial work is never labelled complete."""

    sources_total: int
    sources_read: int
    sources_omitted: int
    """Sources of conversations deleted while the run was in progress."""
    gaps: tuple[str, ...] = ()
    """Why coverage is incomplete (e.g. a batch that failed)."""
    semantic: Literal["done", "skipped", "failed", "partial"] = "skipped"
    semantic_note: str | None = None
    """Why the semantic layer was skipped or failed (e.g. "no model connection")."""

    @property
    def complete(self) -> bool:
        """Every source in scope was read and nothing is missing."""
        return self.sources_read + self.sources_omitted >= self.sources_total and not self.gaps


@dataclass(frozen=True, slots=True)
class EntityCandidate:
    """An existing entity offered to the model as ``known_N`` (REV-3)."""

    entity_id: str
    project_id: str | None
    kind: str
    name: str
    description: str
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class StoryLineCandidate:
    """An existing story line offered to the merge as ``line_N``."""

    story_line_id: str
    project_id: str | None
    title: str
    summary: str
    parent_id: str | None
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A source processed at a version, by stage and scope (REV-7)."""

    stage: Literal["structural", "semantic"]
    scope_key: str
    source_type: str
    source_id: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class BatchFacts:
    """What one batch of sources yielded, saved with the batch until the run publishes."""

    entities: tuple[EntityFact, ...] = ()
    events: tuple[EventFact, ...] = ()
    changes: tuple[EntityChangeFact, ...] = ()
    relations: tuple[RelationFact, ...] = ()
    open_items: tuple[OpenItemFact, ...] = ()
    summary: str = ""
    change_digest: str = ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form for ``review_batches.output``."""
        return _batch_facts().dump_python(self, mode="json")  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Any) -> BatchFacts:
        """Read back what :meth:`to_json` wrote."""
        return _batch_facts().validate_python(data)


@dataclass(frozen=True, slots=True)
class ResultDraft:
    """Everything one review publishes, in one transaction (REV-1, REV-8)."""

    result_id: str
    run_id: str
    scope_key: str
    project_id: str | None
    time_from: datetime | None
    time_to: datetime | None
    trigger: ReviewTrigger
    summary: str
    change_digest: str
    coverage: Coverage
    entities: tuple[EntityFact, ...] = ()
    events: tuple[EventFact, ...] = ()
    changes: tuple[EntityChangeFact, ...] = ()
    relations: tuple[RelationFact, ...] = ()
    open_items: tuple[OpenItemFact, ...] = ()
    resolved_open_item_keys: tuple[str, ...] = ()
    """Open items from earlier results that this review saw resolved."""
    story_lines: tuple[StoryLineFact, ...] = ()
    experiences: tuple[ExperienceFact, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    """Moved only by this publish transaction (REV-7); empty for a reanalyze run."""


_BATCH_FACTS: list[TypeAdapter[BatchFacts]] = []


def _batch_facts() -> TypeAdapter[BatchFacts]:
    """The (de)serializer of ``BatchFacts``, built on first use: building it is ~10 ms of
    pydantic schema work that a process which never saves or reads a batch (the gate, a
    review with nothing new) should not pay at import."""
    if not _BATCH_FACTS:
        from pydantic import TypeAdapter

        _BATCH_FACTS.append(TypeAdapter(BatchFacts))
    return _BATCH_FACTS[0]
