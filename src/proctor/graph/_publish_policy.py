"""What a publish does to the stored graph (REV-3, REV-4): decisions, without a database.

Given the facts of a draft and the stored state of the objects they name (plain values),
these functions say what to insert, update, keep, skip or raise for review; the store
reads the state, calls them and executes what they decided, in its one transaction.

- Identity is the id, never the name: facts are grouped by their object's id only, so two
  objects of one name stay two (SPEC: nothing is merged by name alone).
- User edits win: an object a person confirmed, revised or removed is never overwritten;
  a differing proposal for it becomes a needs-review item, raised once per distinct
  proposal; a revoked relation is never recreated.
- Publishing the same facts again decides the same updates and raises nothing new.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

import orjson

from proctor.graph._facts import EntityFact, RelationFact, SourceRef, StoryLineFact

PublishAction = Literal["insert", "update", "keep", "skip"]
"""``insert`` a new object, ``update`` an automatic one, ``keep`` a protected one as a
person left it, ``skip`` a revoked relation (not recreated, not published)."""


class _Sourced(Protocol):
    @property
    def sources(self) -> tuple[SourceRef, ...]: ...


F = TypeVar("F")
S = TypeVar("S", bound=_Sourced)


@dataclass(frozen=True, slots=True)
class StoredEntity:
    """What the graph holds of an entity a draft names."""

    state: str
    """``automatic`` or a person's state (``confirmed``, ``revised``, ``removed``)."""
    kind: str
    name: str
    description: str
    identity_key: str | None
    project_id: str | None


@dataclass(frozen=True, slots=True)
class StoredRelation:
    """What the graph holds of a relation a draft names."""

    state: str
    """``automatic``, ``confirmed``, ``revised`` or ``revoked``."""
    reason: str


@dataclass(frozen=True, slots=True)
class Proposal:
    """A difference an automatic run proposes for an object a person owns: needs review."""

    object_type: str
    object_id: str
    proposed: dict[str, Any]

    def key(self) -> tuple[str, str, str]:
        """The proposal's identity: the same object and the same values are one proposal."""
        return (self.object_type, self.object_id, canonical(self.proposed))


@dataclass(frozen=True, slots=True)
class Decision(Generic[F]):
    """What a publish does with one object of the draft."""

    object_id: str
    fact: F
    """The object's last fact in the draft: its values win."""
    sources: tuple[SourceRef, ...]
    """Every source of the object's facts, each once, in first-seen order."""
    action: PublishAction
    proposal: Proposal | None = None
    """For a kept object whose proposal differs from a person's values."""
    identity_key: str | None = None
    """For an entity: the identity key to store (the fact's, else the one stored)."""


def canonical(value: Any) -> str:
    """A value as canonical JSON (sorted keys): equal values, equal text."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def merged_sources(facts: Sequence[_Sourced]) -> tuple[SourceRef, ...]:
    """The sources of facts about one object, each once, in first-seen order."""
    if len(facts) == 1 and len(facts[0].sources) < 2:
        return tuple(facts[0].sources)  # nothing to deduplicate: no hashing
    return tuple(dict.fromkeys(ref for fact in facts for ref in fact.sources))


def group_by_identity(facts: Iterable[F], identity: Callable[[F], str]) -> dict[str, list[F]]:
    """Facts grouped by their object's id (never by name), in first-seen order."""
    grouped: dict[str, list[F]] = {}
    for fact in facts:
        grouped.setdefault(identity(fact), []).append(fact)
    return grouped


def decide_entities(
    grouped: Mapping[str, Sequence[EntityFact]], stored: Mapping[str, StoredEntity]
) -> list[Decision[EntityFact]]:
    """Insert a new entity, update an automatic one, keep a person's (flagging a difference)."""
    decisions = []
    for entity_id, facts in grouped.items():
        fact = facts[-1]
        sources = merged_sources(facts)
        row = stored.get(entity_id)
        if row is None:
            decisions.append(Decision(entity_id, fact, sources, "insert", None, fact.identity_key))
        elif row.state == "automatic":
            key = fact.identity_key or row.identity_key
            decisions.append(Decision(entity_id, fact, sources, "update", None, key))
        else:
            proposed = {"name": fact.name, "description": fact.description, "kind": fact.kind}
            held = {"name": row.name, "description": row.description, "kind": row.kind}
            proposal = None if proposed == held else Proposal("entity", entity_id, proposed)
            decisions.append(Decision(entity_id, fact, sources, "keep", proposal))
    return decisions


def decide_relations(
    grouped: Mapping[str, Sequence[RelationFact]], stored: Mapping[str, StoredRelation]
) -> list[Decision[RelationFact]]:
    """Insert, update (automatic), keep (a person's, flagging a new reason) or skip
    (revoked: never recreated) each relation; ``grouped`` is keyed by relation id."""
    decisions = []
    for relation_id, facts in grouped.items():
        fact = facts[-1]
        row = stored.get(relation_id)
        if row is not None and row.state == "revoked":
            decisions.append(Decision(relation_id, fact, (), "skip"))
            continue
        sources = merged_sources(facts)
        if row is None:
            decisions.append(Decision(relation_id, fact, sources, "insert"))
        elif row.state == "automatic":
            decisions.append(Decision(relation_id, fact, sources, "update"))
        else:
            proposal = (
                None
                if fact.reason == row.reason
                else Proposal("relation", relation_id, {"reason": fact.reason})
            )
            decisions.append(Decision(relation_id, fact, sources, "keep", proposal))
    return decisions


def unseen_proposals(
    proposals: Iterable[Proposal], seen: Set[tuple[str, str, str]]
) -> list[Proposal]:
    """The proposals not raised before (``seen``: open or dismissed ones' keys), each once:
    a difference is put to a person one time, however many runs propose it again."""
    known = set(seen)
    fresh = []
    for proposal in proposals:
        key = proposal.key()
        if key not in known:
            known.add(key)
            fresh.append(proposal)
    return fresh


def open_items_to_resolve(
    resolved: Iterable[str], reported_open: Set[str], stored_status: Mapping[str, str]
) -> list[str]:
    """The stored open items a draft saw resolved: a key the same draft reports open stays
    open (the draft says it is), one already resolved or unknown is left alone."""
    wanted = set(resolved) - reported_open
    return [key for key, status in stored_status.items() if key in wanted and status == "open"]


def gone_story_lines(facts: Iterable[StoryLineFact], stored: Set[str]) -> list[StoryLineFact]:
    """Story lines the merge chose to continue (``must_exist``) that no longer exist: any
    one of them fails the publish (REV-9)."""
    return [
        fact
        for fact in facts
        if fact.story_line_id is not None and fact.must_exist and fact.story_line_id not in stored
    ]
