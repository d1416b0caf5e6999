"""The story graph in the store on every backend: publish, user edits, queries (SPEC REV-4,
REV-7 … REV-12)."""

from __future__ import annotations

import dataclasses
import random
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from proctor.errors import ConfigError, NotFoundError
from proctor.graph import EntityFact, OpenItemFact, ResultDraft, StoryLineFact
from proctor.graph.views import PublishOutcome
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store import _schema as t
from tests.builders import T0, conversation_bundle
from tests.store.graph_drafts import (
    add_conversation,
    add_run,
    counts,
    line_id,
    message,
    sample_draft,
    with_entity_name,
)


@pytest.fixture
def project_id(store: SqlStore) -> str:
    return add_conversation(store)


def _publish(
    store: SqlStore, project_id: str | None, run_id: str | None = None, **changes: Any
) -> tuple[ResultDraft, PublishOutcome]:
    """Publish the sample draft (with ``changes``) for a new run."""
    run_id = run_id or str(uuid.uuid4())
    add_run(store, run_id, project_id)
    draft = dataclasses.replace(sample_draft(run_id, project_id), **changes)
    return draft, store.publish_result(draft, "completed")


def _entity(store: SqlStore, draft_entity: EntityFact) -> dict[str, object]:
    with store._read() as c:
        row = (
            c.execute(select(t.entities).where(t.entities.c.entity_id == draft_entity.entity_id))
            .mappings()
            .one()
        )
        return dict(row)


# --- publish -----------------------------------------------------------------------------


def test_publishing_writes_the_result_its_graph_checkpoints_and_the_run_state_together(
    store: SqlStore, project_id: str
) -> None:
    draft, outcome = _publish(store, project_id, run_id="run-1")

    assert outcome.published and outcome.result_id == draft.result_id
    assert (outcome.entities, outcome.entities_new, outcome.events, outcome.relations) == (
        3,
        3,
        2,
        2,
    )
    assert (outcome.open_items, outcome.story_lines, outcome.experiences) == (1, 2, 1)
    assert outcome.checkpoints == 4
    view = store.graph(draft.result_id)
    assert {e.name for e in view.entities} == {"src/app.py", "pytest -q", "Half-up rounding"}
    assert all(e.state == "automatic" for e in view.entities)
    assert [e.title for e in view.events] == ["Rounding agreed", "pytest -q"]
    assert {r.type for r in view.relations} == {"tests", "relates_to"}
    assert [o.title for o in view.open_items] == ["pytest -q still fails"]
    assert view.result.coverage.semantic_note == "no model connection"
    assert view.result.complete
    with store._read() as c:
        run = (
            c.execute(select(t.review_runs).where(t.review_runs.c.run_id == "run-1"))
            .mappings()
            .one()
        )
        checkpoints = c.execute(select(t.review_checkpoints)).mappings().all()
        snapshot = c.execute(select(t.results.c.snapshot)).scalar_one()
    assert (run["status"], run["result_id"]) == ("completed", draft.result_id)
    assert run["finished_at"] is not None and run["active"]
    assert {(cp["source_id"], cp["run_id"]) for cp in checkpoints} == {
        (f"test:conv-1:{part}", "run-1") for part in ("m0", "m1", "m2", "call-1")
    }
    assert {e["name"] for e in snapshot["entities"]} == {e.name for e in view.entities}
    assert {r["reason"] for r in snapshot["relations"]} == {r.reason for r in view.relations}


def test_publishing_the_same_run_again_returns_the_first_outcome_and_writes_nothing(
    store: SqlStore, project_id: str
) -> None:
    _, first = _publish(store, project_id, run_id="run-1")
    before = counts(store)

    again = store.publish_result(sample_draft("run-1", project_id), "failed")

    assert again == dataclasses.replace(first, published=False)
    assert counts(store) == before
    with store._read() as c:
        status = c.execute(select(t.review_runs.c.status)).scalar_one()
    assert status == "completed"


def test_a_result_needs_its_run_to_exist(store: SqlStore, project_id: str) -> None:
    with pytest.raises(NotFoundError, match="no review run 'ghost'"):
        store.publish_result(sample_draft("ghost", project_id), "completed")
    assert counts(store)["results"] == 0


def test_a_story_line_the_merge_chose_that_is_gone_rolls_back_the_whole_publish(
    store: SqlStore, project_id: str
) -> None:
    add_run(store, "run-1", project_id)
    draft = sample_draft("run-1", project_id)
    gone = StoryLineFact("chosen", "Earlier thread", "", (), story_line_id="deleted-line")
    draft = dataclasses.replace(draft, story_lines=(*draft.story_lines, gone))
    before = counts(store)

    with pytest.raises(NotFoundError, match=r"deleted-line.*no longer exists.*rolled back"):
        store.publish_result(draft, "completed")

    assert counts(store) == before
    with store._read() as c:
        assert c.execute(select(t.review_runs.c.status)).scalar_one() == "running"


def test_a_fact_pointing_at_an_entity_nobody_holds_rolls_back_the_publish(
    store: SqlStore, project_id: str
) -> None:
    add_run(store, "run-1", project_id)
    draft = sample_draft("run-1", project_id)
    event = dataclasses.replace(draft.events[0], entity_ids=("no-such-entity",))
    draft = dataclasses.replace(draft, events=(event,))

    with pytest.raises(NotFoundError, match="no-such-entity"):
        store.publish_result(draft, "completed")
    assert counts(store)["entities"] == 0


def test_a_conversation_story_line_is_created_once_then_continued_with_its_sub_thread(
    store: SqlStore, project_id: str
) -> None:
    _publish(store, project_id)
    _publish(store, project_id, summary="second")

    lines = store.stories("invoice-service")
    by_title = {line.title: line for line in lines}
    main = by_title["Fix rounding"]
    assert main.story_line_id == line_id("test:conv-1")
    assert by_title["Test runs"].parent_id == main.story_line_id
    assert len(main.event_ids) == 2
    assert len({line.story_line_id for line in lines}) == 3  # the sub-thread is new per result
    candidates = store.story_line_candidates(project_id)
    assert {c.story_line_id for c in candidates} == {line.story_line_id for line in lines}
    assert [c.updated_at for c in candidates] == sorted(
        (c.updated_at for c in candidates), reverse=True
    )
    # Lines touched by one publish may share a timestamp: the limit cuts the same order.
    assert store.story_line_candidates(project_id, limit=1) == candidates[:1]
    assert store.story_line_candidates("another-project") == []


# --- user edits (REV-4) ---------------------------------------------------------------------


def test_a_confirmed_entity_keeps_its_values_and_a_differing_proposal_needs_review_once(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    target = draft.entities[0]
    store.confirm("entity", target.entity_id)
    confirmed = _entity(store, target)

    for _ in range(2):
        run_id = str(uuid.uuid4())
        add_run(store, run_id, project_id)
        later = with_entity_name(
            sample_draft(run_id, project_id), target.entity_id, "app.py (moved)"
        )
        outcome = store.publish_result(later, "completed")

    assert _entity(store, target) == confirmed
    items = store.needs_review_items()
    assert [(i.object_id, i.proposed["name"], i.current["name"]) for i in items] == [
        (target.entity_id, "app.py (moved)", "src/app.py")
    ]
    assert outcome.needs_review == 0  # the same difference is shown once
    dismissed = store.dismiss_needs_review(items[0].item_id)
    assert dismissed.status == "dismissed"
    assert store.needs_review_items() == []
    assert len(store.needs_review_items(status=None)) == 1
    with pytest.raises(NotFoundError):
        store.dismiss_needs_review(999)


def test_a_revoked_relation_is_never_recreated_by_later_runs(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    tests_relation = next(r for r in store.graph(draft.result_id).relations if r.type == "tests")
    edit = store.remove("relation", tests_relation.relation_id)
    assert (edit.before["state"], edit.after["state"]) == ("automatic", "revoked")

    again, outcome = _publish(store, project_id, summary="again")

    assert outcome.revoked_relations_skipped == 1
    assert [r.type for r in store.graph(again.result_id).relations] == ["relates_to"]
    with store._read() as c:
        states = {
            row[0]: row[1] for row in c.execute(select(t.relations.c.type, t.relations.c.state))
        }
    assert states == {"tests": "revoked", "relates_to": "automatic"}


def test_a_revised_relation_keeps_the_persons_reason(store: SqlStore, project_id: str) -> None:
    draft, _ = _publish(store, project_id)
    relation = next(r for r in store.graph(draft.result_id).relations if r.type == "tests")
    store.revise("relation", relation.relation_id, reason="It is the smoke test")

    again, _ = _publish(store, project_id, summary="again")

    reread = next(r for r in store.graph(again.result_id).relations if r.type == "tests")
    assert (reread.reason, reread.state) == ("It is the smoke test", "revised")
    assert [i.proposed for i in store.needs_review_items()] == [
        {"reason": "pytest -q runs the tests of app.py"}
    ]


def test_edits_are_recorded_with_before_and_after_and_accept_unique_prefixes(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    concept = draft.entities[2]

    store.revise("entity", concept.entity_id[:10], name="Banker's rounding", kind="decision")
    change = store.graph(draft.result_id).changes[0]
    store.remove("change", change.change_id[:10])
    assert store.resolve_graph_object(concept.entity_id[:10]) == ("entity", concept.entity_id)

    detail = store.entity(concept.entity_id[:8])
    assert (detail.entity.name, detail.entity.kind, detail.entity.state) == (
        "Banker's rounding",
        "decision",
        "revised",
    )
    assert [(e.action, e.before["name"], e.after["name"]) for e in detail.edits] == [
        ("revise", "Half-up rounding", "Banker's rounding")
    ]
    assert store.graph(draft.result_id).changes[0].state == "removed"


def test_edits_refuse_unknown_ambiguous_and_inapplicable_requests(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    twins = tuple(dataclasses.replace(draft.entities[2], entity_id=f"concept-{n}") for n in (1, 2))
    _publish(store, project_id, entities=(*draft.entities, *twins))
    relation_id = store.graph(draft.result_id).relations[0].relation_id

    with pytest.raises(NotFoundError, match="no entity 'zzzz'"):
        store.confirm("entity", "zzzz")
    with pytest.raises(ConfigError, match="several"):
        store.confirm("entity", "concept-")
    assert store.resolve_graph_object("concept-2") == ("entity", "concept-2")
    with pytest.raises(ConfigError, match="has no name"):
        store.revise("relation", relation_id, name="x")
    with pytest.raises(ConfigError, match="say what to revise"):
        store.revise("relation", relation_id)
    with pytest.raises(ConfigError, match="unknown kind"):
        store.revise("entity", "concept-1", kind="spaceship")
    with pytest.raises(ConfigError, match="cannot edit"):
        store.confirm("event", "x")


# --- open items ---------------------------------------------------------------------------


def test_an_open_item_is_resolved_by_a_later_result_and_reopened_when_it_fails_again(
    store: SqlStore, project_id: str
) -> None:
    first, _ = _publish(store, project_id)
    key = first.open_items[0].key

    fixed, outcome = _publish(
        store, project_id, open_items=(), resolved_open_item_keys=(key, "unknown")
    )
    assert outcome.resolved_open_items == 1
    [item] = store.graph(fixed.result_id).open_items
    assert (item.status, item.resolved_result_id) == ("resolved", fixed.result_id)

    broken, _ = _publish(store, project_id)
    [item] = store.graph(broken.result_id).open_items
    assert (item.status, item.resolved_result_id) == ("open", None)


def test_a_very_long_open_item_key_is_stored_and_resolved_by_the_same_key(
    store: SqlStore, project_id: str
) -> None:
    long_key = "failing:" + "pytest " * 80
    item = OpenItemFact(
        long_key, project_id, "long", "", (message("test:conv-1", 0),), "structural"
    )
    _publish(store, project_id, open_items=(item,))
    fixed, outcome = _publish(store, project_id, open_items=(), resolved_open_item_keys=(long_key,))
    assert outcome.resolved_open_items == 1
    assert len(store.graph(fixed.result_id).open_items[0].key) <= 255


# --- queries (REV-8 … REV-12) --------------------------------------------------------------


def test_graph_reads_only_that_results_objects_and_never_falls_back_to_the_latest(
    store: SqlStore, project_id: str
) -> None:
    first, _ = _publish(store, project_id)
    add_conversation(store, "test:conv-2")
    second, _ = _publish(
        store, project_id, **_fields(sample_draft("x", project_id, conversation_id="test:conv-2"))
    )

    one = store.graph(first.result_id)
    two = store.graph(second.result_id)
    assert {e.conversation_id for e in one.events} == {"test:conv-1"}
    assert {e.conversation_id for e in two.events} == {"test:conv-2"}
    with pytest.raises(NotFoundError):
        store.graph("no-such-result")
    with pytest.raises(NotFoundError):
        store.graph(first.result_id, "no-such-line")
    with pytest.raises(NotFoundError):
        store.graph(first.result_id, line_id("test:conv-2"))
    assert store.latest_result(first.scope_key).result_id == second.result_id
    assert store.latest_result("project:elsewhere") is None


def _fields(draft: ResultDraft) -> dict[str, Any]:
    keep = (
        "entities",
        "events",
        "changes",
        "relations",
        "open_items",
        "story_lines",
        "experiences",
    )
    return {name: getattr(draft, name) for name in keep}


def test_graph_as_published_reads_what_the_result_said_then(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    concept = draft.entities[2]
    store.revise("entity", concept.entity_id, name="Banker's rounding")

    now = {e.entity_id: e for e in store.graph(draft.result_id).entities}
    then = {e.entity_id: e for e in store.graph(draft.result_id, as_published=True).entities}

    assert (now[concept.entity_id].name, now[concept.entity_id].state) == (
        "Banker's rounding",
        "revised",
    )
    assert (then[concept.entity_id].name, then[concept.entity_id].state) == (
        "Half-up rounding",
        "automatic",
    )
    assert then[concept.entity_id].sources == concept.sources


def test_a_graph_narrowed_to_a_story_line_holds_its_events_and_sub_threads(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    full = store.graph(draft.result_id)
    sub = next(line for line in full.story_lines if line.title == "Test runs")

    main_view = store.graph(draft.result_id, line_id("test:conv-1")[:8])
    sub_view = store.graph(draft.result_id, sub.story_line_id)

    assert len(main_view.story_lines) == 2 and len(main_view.events) == 2
    assert [e.title for e in sub_view.events] == ["pytest -q"]
    assert {e.name for e in sub_view.entities} == {"pytest -q", "src/app.py"}
    assert [r.type for r in sub_view.relations] == ["tests"]
    assert [o.title for o in sub_view.open_items] == ["pytest -q still fails"]
    assert len(sub_view.experiences) == 1


def test_graph_sources_carry_titles_and_excerpts_and_read_as_gone_once_deleted(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    view = store.graph(draft.result_id)
    call = view.source(draft.events[0].sources[0])
    assert call is not None and call.exists
    assert (call.title, call.conversation_title) == ("tool Bash (error, exit 1)", "Fix rounding")
    assert "1 failed, 3 passed" in call.excerpt

    store.delete_conversation("test:conv-1")

    gone = store.graph(draft.result_id).source(draft.events[0].sources[0])
    assert gone is not None and not gone.exists
    with pytest.raises(NotFoundError):
        store.source_text("tool_call", "test:conv-1:call-1")


def test_cited_sources_come_in_key_order_whatever_order_they_are_cited_in(
    store: SqlStore,
) -> None:
    from proctor.store._graph_sources import excerpts

    cited = [
        (kind, f"gone:{n:03d}")
        for kind in ("tool_call", "message", "task_event")
        for n in range(40)
    ]
    cited.append(("tool_call", "test:conv-1:call-1"))
    answers = []
    for seed in range(3):
        shuffled = cited[:]
        random.Random(seed).shuffle(shuffled)
        with store._read() as c:
            answers.append(list(excerpts(c, set(shuffled))))
    assert answers[0] == sorted(cited)  # a set's order varies between processes (hash seeds)
    assert answers[1] == answers[2] == answers[0]


def test_source_text_and_context_read_the_full_text_on_demand(
    store: SqlStore, project_id: str
) -> None:
    call = store.source_text("tool_call", "test:conv-1:call-1")
    assert '"command": "pytest -q"' in call.text and "1 failed, 3 passed" in call.text

    context = store.source_context("message", "test:conv-1:m1", before=1, after=1)
    assert context.focus.text == "message 1"
    assert [s.source_id for s in context.before] == ["test:conv-1:m0"]
    assert [s.source_id for s in context.after] == ["test:conv-1:call-1"]
    with pytest.raises(NotFoundError):
        store.source_text("message", "nope")


def test_overview_filters_by_target_before_the_limit_and_shows_global_results_as_global(
    store: SqlStore, project_id: str
) -> None:
    _publish(store, project_id)
    store.write_conversation(
        prepare_bundle(conversation_bundle("elsewhere:conv", project_hint="billing"))
    )
    billing = next(p.project_id for p in store.projects() if p.name == "billing")
    for _ in range(3):
        _publish(
            store, billing, **_fields(sample_draft("x", billing, conversation_id="elsewhere:conv"))
        )
    global_draft, _ = _publish(store, None, **_fields(sample_draft("x", None)))

    mine = store.overview("invoice-service", limit=2)
    assert [r.scope_label for r in mine] == ["global", "invoice-service"]
    assert mine[0].is_global and mine[0].result_id == global_draft.result_id
    assert [r.scope_label for r in store.overview(f"project:{billing}")] == ["billing"] * 3
    assert len(store.overview(limit=10)) == 5
    assert [r.result_id for r in store.overview("all")] == [global_draft.result_id]
    with pytest.raises(NotFoundError):
        store.overview("no-such-project")


def test_attention_counts_messages_per_hour_over_the_results_scope_and_range(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    assert store.attention(draft.result_id) == [(T0, 3)]

    narrow, _ = _publish(
        store, project_id, time_from=T0 + timedelta(minutes=1), time_to=T0 + timedelta(minutes=1)
    )
    assert store.attention(narrow.result_id) == [(T0, 1)]
    with pytest.raises(NotFoundError):
        store.attention("nope")


def test_entity_candidates_are_recent_first_skip_removed_ones_and_stay_in_the_project(
    store: SqlStore, project_id: str
) -> None:
    draft, _ = _publish(store, project_id)
    store.remove("entity", draft.entities[1].entity_id)
    store.revise("entity", draft.entities[2].entity_id, description="touched last")

    candidates = store.entity_candidates(project_id)
    assert [c.entity_id for c in candidates] == [
        draft.entities[2].entity_id,
        draft.entities[0].entity_id,
    ]
    assert store.entity_candidates("another-project") == []
    assert len(store.entity_candidates("another-project", cross_project=True)) == 2
    assert len(store.entity_candidates(project_id, limit=1)) == 1


def test_identity_never_follows_names(store: SqlStore, project_id: str) -> None:
    draft, _ = _publish(store, project_id)
    twin = dataclasses.replace(draft.entities[2], entity_id=str(uuid.uuid4()))
    again, _ = _publish(store, project_id, entities=(*draft.entities, twin))

    named = [e for e in store.graph(again.result_id).entities if e.name == twin.name]
    assert len(named) == 2


def test_a_query_reads_one_consistent_snapshot_while_a_publish_commits(
    store: SqlStore, project_id: str
) -> None:
    _publish(store, project_id)
    with store.repos.graph._snapshot() as c:
        before = c.execute(select(t.results.c.result_id)).scalars().all()
        _publish(store, project_id, summary="committed meanwhile")
        during = c.execute(select(t.results.c.result_id)).scalars().all()
    assert during == before
    assert len(store.overview()) == 2
