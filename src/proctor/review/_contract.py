"""What the model must answer in a review (SPEC REV-2, REV-3): strict, validated JSON.

A **leaf** answer covers one batch of sources. Every fact cites ``sourceReferenceIds``
— the batch-local ids (``s1``, ``s2`` …) the batch was rendered with — and each must
exist in that batch. Entities refer to existing ones only through ``candidateRef``
(``known_1`` … at most 100 offered); leaving it out creates a new entity. Entities,
changes, relations and open items link to entities by the answer-local ``id``. Unknown
fields are rejected everywhere, and a leaf must carry every array, even when empty.

A **merge** (navigation) answer combines leaf summaries into the result's summary,
story lines, experiences and open items; it may omit those arrays. It sees no sources,
only the events offered to it (``ev1`` …), so its facts cite those.

The JSON field names are camelCase as in the contract; Python attributes are
snake_case.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from proctor.graph import ChangeKind, EntityKind, EventKind, RelationType

MAX_CANDIDATES = 100
"""At most this many existing entities are offered as candidate refs (REV-3)."""

_Ref = Field(min_length=1, max_length=40)


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True
    )


class LeafEvent(_Strict):
    """Something that happened in the batch."""

    kind: EventKind
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(max_length=1000)
    entity_ids: list[str] = Field(max_length=20)
    """Answer-local ids of the entities involved."""
    source_reference_ids: list[str] = Field(min_length=1, max_length=20)


class LeafEntity(_Strict):
    """An entity the batch shows; ``candidate_ref`` when it is one already known."""

    id: str = _Ref
    """Answer-local id (e.g. ``n1``), used by events, changes, relations, open items."""
    candidate_ref: str | None = Field(default=None, max_length=20)
    """``known_N`` from the offered candidates, or null for a new entity."""
    kind: EntityKind
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(max_length=1000)
    source_reference_ids: list[str] = Field(min_length=1, max_length=20)


class LeafEntityChange(_Strict):
    """What happened to an entity in this batch."""

    entity_id: str = _Ref
    kind: ChangeKind
    description: str = Field(min_length=1, max_length=1000)
    source_reference_ids: list[str] = Field(min_length=1, max_length=20)


class LeafRelation(_Strict):
    """A typed link with its reason; ``contrasts`` marks a disagreement."""

    from_id: str = _Ref
    to_id: str = _Ref
    type: RelationType
    reason: str = Field(min_length=1, max_length=500)
    source_reference_ids: list[str] = Field(min_length=1, max_length=20)


class LeafOpenItem(_Strict):
    """Something left unresolved at the end of the batch."""

    title: str = Field(min_length=1, max_length=200)
    detail: str = Field(max_length=1000)
    entity_ids: list[str] = Field(max_length=20)
    source_reference_ids: list[str] = Field(min_length=1, max_length=20)


class LeafOutput(_Strict):
    """One batch's answer: every array present (REV-2: a leaf may not omit them)."""

    events: list[LeafEvent] = Field(max_length=60)
    entities: list[LeafEntity] = Field(max_length=60)
    entity_changes: list[LeafEntityChange] = Field(max_length=60)
    relations: list[LeafRelation] = Field(max_length=60)
    summary: str = Field(max_length=2000)
    change_digest: str = Field(max_length=1000)
    open_items: list[LeafOpenItem] = Field(max_length=20)


class MergeStoryLine(_Strict):
    """A story line: existing (``story_line_ref``) or new; ``parent_key`` for a sub-thread."""

    key: str = _Ref
    story_line_ref: str | None = Field(default=None, max_length=20)
    """``line_N`` from the offered story lines, or null for a new one."""
    parent_key: str | None = Field(default=None, max_length=40)
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(max_length=1000)
    event_refs: list[str] = Field(max_length=200)
    """Ids of the events offered to the merge (``ev1`` …)."""


class MergeExperience(_Strict):
    """A lesson and the events that formed it."""

    title: str = Field(min_length=1, max_length=200)
    lesson: str = Field(min_length=1, max_length=1000)
    event_refs: list[str] = Field(min_length=1, max_length=50)


class MergeOpenItem(_Strict):
    """Something the whole review leaves unresolved, shown by the events it cites."""

    title: str = Field(min_length=1, max_length=200)
    detail: str = Field(max_length=1000)
    event_refs: list[str] = Field(min_length=1, max_length=50)
    """Ids of the events offered to the merge (``ev1`` …); their sources back the item."""


class MergeOutput(_Strict):
    """The navigation answer: summaries always, fact arrays optional."""

    summary: str = Field(max_length=4000)
    change_digest: str = Field(max_length=2000)
    story_lines: list[MergeStoryLine] = Field(default_factory=list, max_length=40)
    experiences: list[MergeExperience] = Field(default_factory=list, max_length=20)
    open_items: list[MergeOpenItem] = Field(default_factory=list, max_length=20)


def leaf_schema() -> dict[str, Any]:
    """JSON Schema of a leaf answer, with the contract's camelCase names."""
    return LeafOutput.model_json_schema(by_alias=True)


def merge_schema() -> dict[str, Any]:
    """JSON Schema of a merge answer."""
    return MergeOutput.model_json_schema(by_alias=True)
