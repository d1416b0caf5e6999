"""Leaf calls (SPEC REV-2, REV-3): strict answers, refs mapped to Proctor's ids, one repair."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from proctor.errors import ModelError
from proctor.graph import SourceRef
from proctor.models import ModelConnection, PoolLimits, open_caller
from proctor.review._batch import SourceBatch
from proctor.review.semantic import LeafResult, SemanticBatchError, SemanticReviewer
from proctor.testing.scripted_model import RecordedRequest, ScriptedModelServer, ScriptedReply
from tests.review.semantic.builders import (
    CACHE_ID,
    CONVERSATION,
    FILE_ID,
    PROJECT,
    SQLITE_ID,
    T0,
    batch,
    candidates,
    entity,
    known_ref,
    leaf_answer,
    structural,
)
from tests.supervisor.scripted import caller_for

pytestmark = pytest.mark.anyio


async def review(server: ScriptedModelServer, the_batch: SourceBatch | None = None) -> LeafResult:
    chosen = the_batch or batch()
    reviewer = SemanticReviewer(caller_for(server))
    return await reviewer.leaf(chosen, structural(chosen), candidates())


def full_answer(request: RecordedRequest) -> dict[str, Any]:
    """An answer using a known concept, the structural file and a new decision."""
    sqlite, file = known_ref(request, "SQLite"), known_ref(request, "src/cache.py")
    return leaf_answer(
        entity("n1", "SQLite", candidate=sqlite, kind="concept", refs=["s1", "s2"]),
        entity("n2", "Cache backend choice", refs=["s2"]),
        entity("n3", "the cache module", candidate=file, kind="file", refs=["s3", "s3"]),
        events=[
            {
                "kind": "decision",
                "title": "Use SQLite for the cache",
                "summary": "No extra service to run; the data fits on one machine.",
                "entityIds": ["n2", "n1", "n2"],
                "sourceReferenceIds": ["s2", "s1"],
            }
        ],
        entityChanges=[
            {
                "entityId": "n2",
                "kind": "proposed",
                "description": "The agent decided on SQLite.",
                "sourceReferenceIds": ["s2"],
            }
        ],
        relations=[
            {
                "fromId": "n2",
                "toId": "n1",
                "type": "uses",
                "reason": "The decision picks SQLite.",
                "sourceReferenceIds": ["s2"],
            },
            {
                "fromId": "n2",
                "toId": "n3",
                "type": "modifies",
                "reason": "The cache module is where it lands.",
                "sourceReferenceIds": ["s4"],
            },
        ],
        openItems=[
            {
                "title": "Fix the eviction test",
                "detail": "It still fails.",
                "entityIds": ["n3"],
                "sourceReferenceIds": ["s3", "s4"],
            }
        ],
    )


def sources_of(the_batch: SourceBatch, *refs: str) -> tuple[SourceRef, ...]:
    by_ref = {s.ref: s for s in the_batch.sources}
    return tuple(by_ref[ref].cite() for ref in refs)


async def test_a_valid_leaf_maps_candidates_and_citations_to_proctor_ids() -> None:
    the_batch = batch()
    with ScriptedModelServer(responder=full_answer) as server:
        result = await review(server, the_batch)

    facts = result.facts
    sqlite, choice, module = facts.entities
    assert sqlite.entity_id == SQLITE_ID
    assert (sqlite.kind, sqlite.name, sqlite.project_id) == ("concept", "SQLite", PROJECT)
    assert sqlite.sources == sources_of(the_batch, "s1", "s2")
    # The structural file keeps its identity, kind, name and locator; the model adds words.
    assert module.entity_id == FILE_ID
    assert (module.kind, module.name, module.identity_key) == (
        "file",
        "src/cache.py",
        "src/cache.py",
    )
    assert module.description == "About the cache module"
    assert module.sources == sources_of(the_batch, "s3")
    # A new entity gets a fresh UUID, never one of the candidates'.
    assert uuid.UUID(choice.entity_id).version == 4
    assert choice.entity_id not in {SQLITE_ID, CACHE_ID, FILE_ID}
    assert {e.layer for e in facts.entities} == {"semantic"}

    [event] = facts.events
    assert event.entity_ids == (choice.entity_id, SQLITE_ID)
    assert event.sources == sources_of(the_batch, "s2", "s1")
    assert (event.project_id, event.conversation_id, event.layer) == (
        PROJECT,
        CONVERSATION,
        "semantic",
    )
    assert event.occurred_at == T0  # the earliest cited source
    assert uuid.UUID(event.event_id).version == 5

    [change] = facts.changes
    assert (change.entity_id, change.kind) == (choice.entity_id, "proposed")
    assert [(r.from_entity_id, r.to_entity_id, r.type) for r in facts.relations] == [
        (choice.entity_id, SQLITE_ID, "uses"),
        (choice.entity_id, FILE_ID, "modifies"),
    ]
    [item] = facts.open_items
    assert item.entity_ids == (FILE_ID,)
    assert item.sources == sources_of(the_batch, "s3", "s4")
    assert item.key.startswith("semantic:")
    assert facts.summary.startswith("Chose SQLite")
    assert (result.calls, result.input_tokens, result.output_tokens) == (1, 100, 20)


async def test_the_same_answer_for_the_same_sources_gives_the_same_event_ids() -> None:
    with ScriptedModelServer(responder=full_answer) as server:
        first = await review(server)
        second = await review(server)
    assert [e.event_id for e in first.facts.events] == [e.event_id for e in second.facts.events]
    assert [i.key for i in first.facts.open_items] == [i.key for i in second.facts.open_items]
    # Entities without a candidate are new each time: identity is never inferred.
    assert first.facts.entities[1].entity_id != second.facts.entities[1].entity_id


async def test_entities_with_the_same_name_and_no_candidate_ref_are_two_entities() -> None:
    answer = leaf_answer(
        entity("n1", "SQLite", kind="concept", refs=["s1"]),
        entity("n2", "SQLite", kind="concept", refs=["s2"]),
    )
    with ScriptedModelServer([answer]) as server:
        result = await review(server)
    first, second = result.facts.entities
    assert first.name == second.name == "SQLite"
    assert first.entity_id != second.entity_id
    assert SQLITE_ID not in {first.entity_id, second.entity_id}


def with_ref(ref: str) -> dict[str, Any]:
    return leaf_answer(entity("n1", "SQLite", candidate=ref, kind="concept"))


def invalid_answers() -> list[Any]:
    valid = leaf_answer(entity("n1", "Cache backend choice"))
    without_open_items = {k: v for k, v in valid.items() if k != "openItems"}
    extra_field = leaf_answer(entity("n1", "Cache backend choice", confidence=0.9))
    snake_case = {
        **{k: v for k, v in valid.items() if k != "changeDigest"},
        "change_digest": "x",
    }
    duplicate = leaf_answer(
        entity("n1", "SQLite", candidate="known_2"), entity("n2", "SQL", candidate="known_2")
    )
    dangling = leaf_answer(
        entity("n1", "Cache backend choice"),
        relations=[
            {
                "fromId": "n1",
                "toId": "known_2",
                "type": "uses",
                "reason": "r",
                "sourceReferenceIds": ["s2"],
            }
        ],
    )
    same_id = leaf_answer(entity("n1", "A"), entity("n1", "B"))
    return [
        pytest.param(with_ref("known_99"), "known_99' was not offered", id="unknown-candidate"),
        pytest.param(with_ref(SQLITE_ID), "entities.0.candidateRef", id="uuid-as-candidate"),
        pytest.param(with_ref("SQLite"), "is not a known_N ref", id="name-as-candidate"),
        pytest.param(duplicate, "is already mapped by entities.0", id="duplicate-mapping"),
        pytest.param(
            leaf_answer(entity("n1", "X", refs=["s99"])), "'s99' is not a source", id="outside"
        ),
        pytest.param(
            leaf_answer(entity("n1", "X", refs=["known_1"])),
            "'known_1' is not a source",
            id="known",
        ),
        pytest.param(
            leaf_answer(entity("n1", "X", refs=["c1"])), "'c1' is not a source", id="conversation"
        ),
        pytest.param(
            leaf_answer(entity("n1", "X", refs=["background"])), "is not a source", id="background"
        ),
        pytest.param(extra_field, "Extra inputs are not permitted", id="unknown-field"),
        pytest.param(snake_case, "changeDigest: Field required", id="snake-case-name"),
        pytest.param(without_open_items, "openItems: Field required", id="missing-array"),
        pytest.param(dangling, "'known_2' is not the id of an entity", id="dangling-entity"),
        pytest.param(same_id, "'n1' is used by another entity", id="duplicate-id"),
        pytest.param("not json at all", "not one JSON object", id="not-json"),
    ]


@pytest.mark.parametrize(("answer", "error"), invalid_answers())
async def test_an_invalid_leaf_gets_one_repair_and_then_fails_the_batch(
    answer: Any, error: str
) -> None:
    with ScriptedModelServer([answer, answer]) as server:
        with pytest.raises(SemanticBatchError) as failed:
            await review(server, batch(batch_no=7))
        first, repair = server.requests

    assert (failed.value.reason, failed.value.batch_no) == ("invalid_answer", 7)
    assert any(error in e for e in failed.value.errors), failed.value.errors
    assert (failed.value.calls, failed.value.input_tokens) == (2, 200)
    # The repair call sends the same instructions, the same data, and the rejected answer
    # with its errors as quoted data.
    assert repair.text_of("system") == first.text_of("system")
    assert "<<<REJECTED-ANSWER" in repair.text_of("user")
    assert "<<<REJECTED-ANSWER" not in first.text_of("user")


async def test_a_repaired_answer_is_accepted() -> None:
    with ScriptedModelServer(responder=full_answer) as server:
        server.push(with_ref("known_99"))
        result = await review(server)
        _, repair = server.requests
    assert result.calls == 2
    assert result.facts.entities[0].entity_id == SQLITE_ID
    assert "known_99" in repair.text_of("user") and "was not offered" in repair.text_of("user")


async def test_one_leaf_call_is_made_per_batch() -> None:
    with ScriptedModelServer(responder=full_answer) as server:
        results = [await review(server, batch(batch_no=n)) for n in range(3)]
        assert len(server.requests) == 3
    assert [r.calls for r in results] == [1, 1, 1]


async def test_an_empty_batch_makes_no_model_call() -> None:
    empty = SourceBatch(run_id="run-1", batch_no=0, scope_key="all", sources=())
    with ScriptedModelServer() as server:
        result = await SemanticReviewer(caller_for(server)).leaf(empty, structural(batch()), ())
        assert server.requests == []
    assert result.calls == 0


async def test_a_model_outage_fails_the_batch_not_the_run() -> None:
    reply = ScriptedReply(status=400, content="prompt too long")
    with ScriptedModelServer([reply]) as server, pytest.raises(SemanticBatchError) as failed:
        await review(server, batch(batch_no=3))
    assert (failed.value.reason, failed.value.batch_no, failed.value.calls) == ("model_error", 3, 1)


async def test_a_broken_setting_propagates_as_a_config_error() -> None:
    remote = ModelConnection(
        name="remote", provider="openai", model="m", base_url="https://api.example.test/v1"
    )
    reviewer = SemanticReviewer(open_caller(remote, limits=PoolLimits()))
    the_batch = batch()
    with pytest.raises(ModelError) as failed:
        await reviewer.leaf(the_batch, structural(the_batch), candidates())
    assert failed.value.kind == "config"
