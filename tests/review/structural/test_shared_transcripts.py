"""Every shared transcript (Claude Code, Codex, Gemini CLI, OpenTelemetry) through the
structural layer: exact, cited facts, and the commits and test files structure proves."""

from __future__ import annotations

from proctor.graph import BatchFacts, EntityFact, EventFact, RelationFact, structural_entity_id
from proctor.review._batch import SourceBatch
from proctor.review.structural import extract_structural
from proctor.store import Store
from tests.review.structural.helpers import batch_of, conversation_ids, every_ref, text_of


def facts_of(store: Store, suffix: str) -> tuple[SourceBatch, BatchFacts]:
    (conversation_id,) = [c for c in conversation_ids(store) if c.endswith(suffix)]
    batch = batch_of(store, [conversation_id])
    return batch, extract_structural(batch)


def test_every_fact_cites_a_source_of_its_batch_and_ranges_lie_inside_the_field(
    shared_batches: list[SourceBatch], examples_batch: SourceBatch
) -> None:
    kinds: set[str] = set()
    for batch in [examples_batch, *shared_batches]:
        facts = extract_structural(batch)
        in_batch = {(s.source_type, s.source_id) for s in batch.sources}
        facts_list: list[EntityFact | EventFact | RelationFact] = [
            *facts.entities, *facts.events, *facts.relations,
        ]  # fmt: skip
        for fact in facts_list:
            assert fact.sources, fact
            assert fact.layer == "structural"
        for what, ref in every_ref(facts):
            assert (ref.source_type, ref.source_id) in in_batch, what
            if ref.start is not None:
                assert ref.end is not None and 0 <= ref.start < ref.end, what
                text = text_of(batch, ref)
                assert len(text) == ref.end - ref.start and text.strip(), what
        project_of = {s.source_id: s.project_id for s in batch.sources}
        for event in facts.events:
            kinds.add(event.kind)
            assert {project_of[r.source_id] for r in event.sources} == {event.project_id}
            assert event.title and event.summary
        for entity in facts.entities:
            assert entity.identity_key is not None
            assert entity.entity_id == structural_entity_id(
                entity.project_id, entity.kind, entity.identity_key
            )
    # No shared transcript installs a package (see test_classification for installs).
    assert kinds == {
        "file_read", "file_edit", "file_create", "command", "test_run", "error",
        "url_fetch", "commit", "subagent_run", "task_status", "episode",
    }  # fmt: skip


def test_commits_modify_the_files_the_line_staged_after_the_session_changed_them(
    shared_store: Store,
) -> None:
    batch, facts = facts_of(shared_store, "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    names = {e.entity_id: e.name for e in facts.entities}
    commits = [e for e in facts.events if e.kind == "commit"]
    # The attempts the pre-commit hook refused made no commit.
    assert [e.title.split(":")[0] for e in commits] == [
        "Committed 12e2d10", "Committed 461930e", "Committed d9e611e", "Committed a23908c",
        "Committed ad570ac", "Committed 12fe57f",
    ]  # fmt: skip
    modified = {
        (names[r.from_entity_id].split(" ")[0], names[r.to_entity_id])
        for r in facts.relations
        if r.type == "modifies"
    }
    assert {f for c, f in modified if c == "d9e611e"} == {
        "lib/spotter_web/controllers/otel_trace_helpers.ex",
        "lib/spotter_web/controllers/hooks_controller.ex",
        "lib/spotter_web/controllers/session_hook_controller.ex",
    }
    # `git add -A` names nothing exactly; only git's own "create mode" line counts.
    assert {f for c, f in modified if c == "12e2d10"} == {"lib/spotter/telemetry/otel.ex"}
    relation = next(r for r in facts.relations if names[r.to_entity_id] == "README.md")
    assert relation.reason == (
        "README.md is staged in the line that made commit 12fe57f, after this conversation "
        "changed it"
    )
    staged, line = (text_of(batch, ref) for ref in relation.sources)
    assert staged == "README.md"
    assert line.startswith("[spotter-4te 12fe57f] feat: add OTEL regression tests")


def test_a_commit_without_printed_hash_is_no_commit(shared_store: Store) -> None:
    _, facts = facts_of(shared_store, "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    refused = [
        e for e in facts.events
        if e.kind == "command" and e.outcome == "failed" and "Pre-commit validation failed" in e.summary
    ]  # fmt: skip
    assert len(refused) == 8
    commit_sources = {r.source_id for e in facts.events if e.kind == "commit" for r in e.sources}
    assert not commit_sources & {r.source_id for e in refused for r in e.sources}


def test_gemini_shell_commands_take_their_outcome_from_the_printed_exit_code(
    shared_store: Store,
) -> None:
    # Gemini CLI records no exit code field; its result says "Exit Code: 1".
    batch, facts = facts_of(shared_store, "session-2025-12-16T23-47-b4f17607")
    commands = [e for e in facts.events if e.kind != "episode"]
    assert [(e.kind, e.title, e.outcome) for e in commands] == [
        ("command", "Ran printf 'line1\\nline2\\nline3\\n'", "ok"),
        ("command", "ls /non-existent-directory failed (exit 1)", "failed"),
    ]
    assert text_of(batch, commands[1].sources[1]) == "Exit Code: 1"


def test_teammate_sub_agents_and_their_task_list_become_agents_and_task_updates(
    shared_store: Store,
) -> None:
    _, facts = facts_of(shared_store, "ef000000-0000-4000-8000-000000000001")
    agents = [e for e in facts.entities if e.kind == "agent"]
    assert [a.identity_key for a in agents] == ["general-purpose"]
    tasks = [e for e in facts.events if e.kind == "task_status"]
    assert [e.title for e in tasks] == [
        "Add relay tests: pending",
        "Add server tests: pending",
        "Add relay tests: in_progress",
    ]
    assert {e.name for e in facts.entities if e.kind == "task"} == {
        "Add relay tests",
        "Add server tests",
    }
