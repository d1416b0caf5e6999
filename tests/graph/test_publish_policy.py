"""The publish policy's decisions for any facts and any stored state (REV-3, REV-4, REV-9).

The policy is pure: these properties run on plain values, thousands of examples in a
second. ``apply`` is a model of what the store does with the decisions (the store's own
tests check it does exactly that, and tests/review/test_published_graph_unchanged.py that
the rows are the same as before the policy moved out of SQL).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.graph import (
    EntityFact,
    Proposal,
    RelationFact,
    SourceRef,
    StoredEntity,
    StoredRelation,
    StoryLineFact,
    decide_entities,
    decide_relations,
    gone_story_lines,
    group_by_identity,
    open_items_to_resolve,
    unseen_proposals,
)

IDS = ("entity-a", "entity-b", "entity-c")
NAMES = ("app.py", "Rounding")
"""Fewer names than ids: names collide all the time, identities must not."""
PERSON_STATES = ("confirmed", "revised", "removed")
FAST = settings(max_examples=150, deadline=None)

refs = st.builds(
    SourceRef, st.sampled_from(("message", "tool_call")), st.sampled_from(("s1", "s2", "s3"))
)
entity_facts = st.builds(
    EntityFact,
    entity_id=st.sampled_from(IDS),
    project_id=st.just("p"),
    kind=st.sampled_from(("concept", "file")),
    name=st.sampled_from(NAMES),
    description=st.sampled_from(("d1", "d2")),
    sources=st.lists(refs, max_size=3).map(tuple),
    layer=st.just("semantic"),
    identity_key=st.sampled_from((None, "k1", "k2")),
)
stored_entities = st.dictionaries(
    st.sampled_from(IDS),
    st.builds(
        StoredEntity,
        state=st.sampled_from(("automatic", *PERSON_STATES)),
        kind=st.sampled_from(("concept", "file")),
        name=st.sampled_from(NAMES),
        description=st.sampled_from(("d1", "d2", "a person's words")),
        identity_key=st.sampled_from((None, "k1")),
        project_id=st.just("p"),
    ),
)
relation_facts = st.builds(
    RelationFact,
    from_entity_id=st.sampled_from(IDS),
    to_entity_id=st.sampled_from(IDS),
    type=st.sampled_from(("uses", "relates_to")),
    reason=st.sampled_from(("r1", "r2")),
    sources=st.lists(refs, max_size=2).map(tuple),
    layer=st.just("semantic"),
)


def relation_key(fact: RelationFact) -> str:
    return f"{fact.from_entity_id}>{fact.to_entity_id}:{fact.type}"


stored_relations = st.dictionaries(
    st.builds(
        lambda a, b, kind: f"{a}>{b}:{kind}",
        st.sampled_from(IDS),
        st.sampled_from(IDS),
        st.sampled_from(("uses", "relates_to")),
    ),
    st.builds(
        StoredRelation,
        state=st.sampled_from(("automatic", "confirmed", "revised", "revoked")),
        reason=st.sampled_from(("r1", "r2", "a person's reason")),
    ),
)


def apply_entities(
    facts: Sequence[EntityFact], stored: Mapping[str, StoredEntity]
) -> tuple[dict[str, StoredEntity], list[Proposal]]:
    """The stored entities after a publish of ``facts``, and the proposals it raised."""
    after = dict(stored)
    proposals = []
    for decision in decide_entities(group_by_identity(facts, lambda f: f.entity_id), stored):
        fact = decision.fact
        if decision.action in ("insert", "update"):
            state = "automatic"
            after[decision.object_id] = StoredEntity(
                state, fact.kind, fact.name, fact.description, decision.identity_key, "p"
            )
        if decision.proposal is not None:
            proposals.append(decision.proposal)
    return after, proposals


@FAST
@given(facts=st.lists(entity_facts, max_size=8), stored=stored_entities)
def test_an_entity_a_person_confirmed_revised_or_removed_is_never_overwritten(
    facts: list[EntityFact], stored: dict[str, StoredEntity]
) -> None:
    after, proposals = apply_entities(facts, stored)
    for entity_id, row in stored.items():
        if row.state in PERSON_STATES:
            assert after[entity_id] == row
    for proposal in proposals:
        assert stored[proposal.object_id].state in PERSON_STATES
        held = stored[proposal.object_id]
        assert proposal.proposed != {
            "name": held.name,
            "description": held.description,
            "kind": held.kind,
        }


@FAST
@given(facts=st.lists(entity_facts, max_size=8), stored=stored_entities)
def test_a_differing_proposal_for_a_protected_entity_is_raised_for_review(
    facts: list[EntityFact], stored: dict[str, StoredEntity]
) -> None:
    _, proposals = apply_entities(facts, stored)
    raised = {proposal.object_id: proposal.proposed for proposal in proposals}
    for entity_id, group in group_by_identity(facts, lambda f: f.entity_id).items():
        row = stored.get(entity_id)
        if row is None or row.state == "automatic":
            assert entity_id not in raised
            continue
        last = group[-1]
        wanted = {"name": last.name, "description": last.description, "kind": last.kind}
        held = {"name": row.name, "description": row.description, "kind": row.kind}
        assert raised.get(entity_id) == (None if wanted == held else wanted)


@FAST
@given(facts=st.lists(entity_facts, max_size=8), stored=stored_entities)
def test_entities_of_one_name_and_different_ids_are_never_merged(
    facts: list[EntityFact], stored: dict[str, StoredEntity]
) -> None:
    decisions = decide_entities(group_by_identity(facts, lambda f: f.entity_id), stored)
    assert [d.object_id for d in decisions] == list(dict.fromkeys(f.entity_id for f in facts))
    for decision in decisions:
        own = [fact for fact in facts if fact.entity_id == decision.object_id]
        assert decision.fact == own[-1]
        assert set(decision.sources) == {ref for fact in own for ref in fact.sources}
        assert len(decision.sources) == len(set(decision.sources))
        if decision.action == "insert":
            assert decision.object_id not in stored


@FAST
@given(facts=st.lists(entity_facts, max_size=8), stored=stored_entities)
def test_publishing_the_same_entities_twice_changes_nothing_and_raises_nothing_new(
    facts: list[EntityFact], stored: dict[str, StoredEntity]
) -> None:
    once, first = apply_entities(facts, stored)
    raised = unseen_proposals(first, set())
    twice, second = apply_entities(facts, once)
    assert twice == once
    assert unseen_proposals(second, {proposal.key() for proposal in raised}) == []


@FAST
@given(facts=st.lists(entity_facts, max_size=8), stored=stored_entities)
def test_an_automatic_entity_keeps_its_identity_key_when_a_fact_has_none(
    facts: list[EntityFact], stored: dict[str, StoredEntity]
) -> None:
    for decision in decide_entities(group_by_identity(facts, lambda f: f.entity_id), stored):
        if decision.action == "update":
            held = stored[decision.object_id].identity_key
            assert decision.identity_key == (decision.fact.identity_key or held)
        elif decision.action == "insert":
            assert decision.identity_key == decision.fact.identity_key


def apply_relations(
    facts: Sequence[RelationFact], stored: Mapping[str, StoredRelation]
) -> tuple[dict[str, StoredRelation], list[Proposal], set[str]]:
    """The stored relations after a publish, its proposals and the relations it published."""
    after = dict(stored)
    proposals = []
    published = set()
    for decision in decide_relations(group_by_identity(facts, relation_key), stored):
        if decision.action in ("insert", "update"):
            after[decision.object_id] = StoredRelation("automatic", decision.fact.reason)
        if decision.action != "skip":
            published.add(decision.object_id)
        if decision.proposal is not None:
            proposals.append(decision.proposal)
    return after, proposals, published


@FAST
@given(facts=st.lists(relation_facts, max_size=8), stored=stored_relations)
def test_a_revoked_relation_is_never_recreated_and_an_edited_one_never_overwritten(
    facts: list[RelationFact], stored: dict[str, StoredRelation]
) -> None:
    after, proposals, published = apply_relations(facts, stored)
    for key, row in stored.items():
        if row.state != "automatic":
            assert after[key] == row
        if row.state == "revoked":
            assert key not in published
            assert all(proposal.object_id != key for proposal in proposals)
    for proposal in proposals:
        assert stored[proposal.object_id].state in ("confirmed", "revised")
        assert proposal.proposed != {"reason": stored[proposal.object_id].reason}


@FAST
@given(facts=st.lists(relation_facts, max_size=8), stored=stored_relations)
@pytest.mark.slow
def test_publishing_the_same_relations_twice_changes_nothing(
    facts: list[RelationFact], stored: dict[str, StoredRelation]
) -> None:
    once, first, _ = apply_relations(facts, stored)
    twice, second, _ = apply_relations(facts, once)
    assert twice == once
    assert unseen_proposals(second, {p.key() for p in first}) == []


proposals = st.lists(
    st.builds(
        Proposal,
        st.sampled_from(("entity", "relation")),
        st.sampled_from(IDS),
        st.fixed_dictionaries({"name": st.sampled_from(NAMES), "kind": st.just("concept")}),
    ),
    max_size=8,
)


@FAST
@given(raised=proposals, seen=proposals)
def test_a_proposal_is_put_to_a_person_once_whatever_its_key_order(
    raised: list[Proposal], seen: list[Proposal]
) -> None:
    known = {proposal.key() for proposal in seen}
    fresh = unseen_proposals(raised, known)
    keys = [proposal.key() for proposal in fresh]
    assert len(keys) == len(set(keys))
    assert not set(keys) & known
    assert set(keys) | known == {p.key() for p in raised} | known
    reordered = [replace(p, proposed=dict(reversed(p.proposed.items()))) for p in raised]
    assert [p.key() for p in unseen_proposals(reordered, known)] == keys


@FAST
@given(
    resolved=st.sets(st.sampled_from("abcdef")),
    reported=st.sets(st.sampled_from("abcdef")),
    stored=st.dictionaries(st.sampled_from("abcdef"), st.sampled_from(("open", "resolved"))),
)
def test_only_stored_open_items_the_draft_does_not_report_open_are_resolved(
    resolved: set[str], reported: set[str], stored: dict[str, str]
) -> None:
    closing = open_items_to_resolve(resolved, reported, stored)
    assert set(closing) == {
        key for key, status in stored.items() if status == "open" and key in resolved - reported
    }
    assert closing == [key for key in stored if key in closing]


@FAST
@given(
    lines=st.lists(
        st.builds(
            StoryLineFact,
            key=st.sampled_from("kl"),
            title=st.just("t"),
            summary=st.just("s"),
            event_ids=st.just(()),
            story_line_id=st.sampled_from((None, "line-1", "line-2")),
            must_exist=st.booleans(),
        ),
        max_size=5,
    ),
    stored=st.sets(st.sampled_from(("line-1", "line-2"))),
)
def test_a_chosen_story_line_that_is_gone_fails_the_publish_and_a_derived_one_never_does(
    lines: list[StoryLineFact], stored: set[str]
) -> None:
    gone = gone_story_lines(lines, stored)
    for line in lines:
        missing = line.story_line_id is not None and line.story_line_id not in stored
        assert (line in gone) == (missing and line.must_exist)
