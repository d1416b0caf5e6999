"""REV-13 on the bundled examples: the exact facts a review publishes without a model."""

from __future__ import annotations

import pytest

from proctor.graph import BatchFacts, EntityFact, EventFact
from proctor.review._batch import SourceBatch
from proctor.review.structural import derive_open_items, open_item_key
from tests.review.structural.helpers import (
    CLAUDE_AGENT,
    CLAUDE_MAIN,
    CODEX,
    cited_text,
    events_of,
)

PYTEST_CALL = "cc:tool:toolu_01guP7v4N3kJEzi6tWvpKJuN"
FAILED_EDIT_CALL = "cc:tool:toolu_01c9gYth5GbjE7ikxomFZmjp"
WEBFETCH_CALL = "cc:tool:toolu_01CDw3XEzwbegZB2y1qNBvqu"
CURL_CALL = "cc:tool:toolu_01AP3chrwDqbNpRqMDnddyyq"
TASK_CALL = "cc:tool:toolu_01vL4XwGBjzGRY7dLErfxQ5G"
EXPORT_CALLS = [
    "cc:tool:toolu_01h9MV5E37KKm63hB5SEKEEC",
    "cc:tool:toolu_01oGLKLyMJ2VVgVEnWtpUHCN",
    "cc:tool:toolu_017hXaf7AK8WjrFWrEHgrSf4",
    "cc:tool:toolu_019QZMTk5dLXAtUyKXpfUHJc",
]
VITEST_CALL = f"{CODEX}:call:call_sSIfZgPJ4Xh2XiVdvEtEWrZG"
PATCH_CALL = f"{CODEX}:call:call_PKdeyJ271r9TDq9E8DBTxZPU"
TSC_CALL = f"{CODEX}:call:call_Q9fqZ80chjQV38NiE5Dg7k36"
MIGRATE_CALLS = [
    f"{CODEX}:call:call_3Bzl5LFi6EIKS43V5dXZElUX",
    f"{CODEX}:call:call_0NyJJRFDa7Tmp1XcOjy7E7Ji",
    f"{CODEX}:call:call_Ak8KXldTQZrPSPMwFUn3D5i3",
]


def entity(facts: BatchFacts, kind: str, identity_key: str) -> EntityFact:
    (found,) = [e for e in facts.entities if e.kind == kind and e.identity_key == identity_key]
    return found


def only(events: list[EventFact]) -> EventFact:
    (event,) = events
    return event


def cited(batch: SourceBatch, event: EventFact, field: str) -> list[str]:
    return [
        cited_text(batch, r.source_id, field, r.start, r.end)
        for r in event.sources
        if r.field == field and r.start is not None and r.end is not None
    ]


def test_the_failing_pytest_run_is_a_failed_test_run_citing_the_runner_summary(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    run = only(events_of(examples_facts, "test_run", PYTEST_CALL))
    test = entity(examples_facts, "test", "pytest")
    command = entity(examples_facts, "command", "python -m pytest -q")
    assert run.outcome == "failed"
    assert run.title == "pytest failed (2 failed, 22 passed)"
    assert run.entity_ids == (test.entity_id, command.entity_id)
    assert run.conversation_id == CLAUDE_MAIN
    assert run.layer == "structural"
    assert str(run.occurred_at) == "2026-02-17 09:42:21.021000+00:00"
    assert cited(examples_batch, run, "arguments.command") == ["python -m pytest -q"]
    assert cited(examples_batch, run, "result_text") == ["2 failed, 22 passed in 0.53s"]
    # The test run reports the failure itself: no separate error event for it.
    assert events_of(examples_facts, "error", PYTEST_CALL) == []


def test_the_failing_pytest_run_stays_open_because_no_later_run_passed(
    examples_facts: BatchFacts,
) -> None:
    items, resolved = derive_open_items(examples_facts.events)
    test = entity(examples_facts, "test", "pytest")
    (item,) = [i for i in items if i.key == open_item_key(test.entity_id)]
    run = only(events_of(examples_facts, "test_run", PYTEST_CALL))
    assert item.title == "pytest still failing"
    assert item.sources == run.sources
    assert item.entity_ids == (test.entity_id,)
    assert item.project_id == test.project_id
    assert "2 failed, 22 passed" in item.detail
    assert open_item_key(test.entity_id) not in resolved


def test_edited_and_read_files_are_file_entities_relative_to_the_working_folder(
    examples_facts: BatchFacts,
) -> None:
    files = {e.identity_key for e in examples_facts.entities if e.kind == "file"}
    assert files == {
        "invoice/totals.py",
        "invoice/export.py",
        "invoice/pdf.py",
        "tests/test_totals.py",
        ".env",
        "src/jobs/exportLedger.ts",
        "test/exportLedger.test.ts",
        "migrations/0007_ledger_export_key.sql",
    }
    edited = {
        (e.title, e.outcome, e.sources[0].field)
        for e in examples_facts.events
        if e.kind == "file_edit" and e.conversation_id == CLAUDE_MAIN
    }
    assert edited == {
        ("Edited invoice/totals.py", "ok", "arguments.file_path"),
        ("Edited tests/test_totals.py", "ok", "arguments.file_path"),
        ("Edited invoice/pdf.py", "ok", "arguments.file_path"),
    }
    totals = entity(examples_facts, "file", "invoice/totals.py")
    assert totals.name == "invoice/totals.py"
    assert totals.description == "File invoice/totals.py under /home/dev/projects/invoice-service"
    assert len(totals.sources) == 2  # read, then edited


def test_an_edit_that_failed_is_an_error_about_the_file_not_an_edit(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    assert events_of(examples_facts, "file_edit", FAILED_EDIT_CALL) == []
    error = only(events_of(examples_facts, "error", FAILED_EDIT_CALL))
    test_file = entity(examples_facts, "file", "tests/test_totals.py")
    assert error.entity_ids == (test_file.entity_id,)
    assert cited(examples_batch, error, "result_text") == [
        "File has not been read yet. Read it first before writing to it."
    ]
    assert error.title.startswith("Error in Edit: File has not been read yet.")


def test_the_retry_loop_is_one_command_with_four_failed_runs_each_citing_the_exception(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    command = entity(examples_facts, "command", "python -m invoice.cli export --month 2026-01")
    runs = [only(events_of(examples_facts, "command", call)) for call in EXPORT_CALLS]
    assert all(events_of(examples_facts, "error", call) == [] for call in EXPORT_CALLS), (
        "the command event tells the failure; no second event for it"
    )
    assert {r.outcome for r in runs} == {"failed"}
    assert {r.title for r in runs} == {
        "python -m invoice.cli export --month 2026-01 failed (exit 1)"
    }
    assert all(r.entity_ids == (command.entity_id,) for r in runs)
    assert all(
        cited(examples_batch, r, "result_text")
        == ["Exit code 1", "sqlite3.OperationalError: database is locked"]
        for r in runs
    )
    assert all("database is locked" in r.summary for r in runs)
    assert len(command.sources) == 4
    assert len({r.event_id for r in runs}) == 4


def test_webfetch_reads_a_url_and_the_failed_curl_upload_names_its_url_and_error(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    page = entity(
        examples_facts, "url", "https://docs-mirror.example/python/3.12/library/decimal.html"
    )
    fetch = only(events_of(examples_facts, "url_fetch", WEBFETCH_CALL))
    assert fetch.outcome == "ok"
    assert fetch.entity_ids == (page.entity_id,)
    assert fetch.title == f"Fetched {page.identity_key}"
    assert cited(examples_batch, fetch, "arguments.url") == [page.identity_key]
    collector = entity(examples_facts, "url", "https://collector.docs-mirror.example/ingest")
    assert events_of(examples_facts, "url_fetch", CURL_CALL) == []  # it never got there
    command = only(events_of(examples_facts, "command", CURL_CALL))
    assert command.outcome == "failed"
    assert command.title.endswith("failed (exit 6)")
    assert events_of(examples_facts, "error", CURL_CALL) == []
    assert collector.entity_id in command.entity_ids[1:], "the command first, then its URL"
    assert "curl: (6) Could not resolve host: collector.docs-mirror.example" in cited(
        examples_batch, command, "result_text"
    )


def test_the_explore_sub_agent_is_an_agent_entity_with_a_completed_run(
    examples_facts: BatchFacts,
) -> None:
    agent = entity(examples_facts, "agent", "Explore")
    run = only(events_of(examples_facts, "subagent_run", TASK_CALL))
    assert run.entity_ids == (agent.entity_id,)
    assert run.title == "Explore sub-agent: Map money rounding call sites"
    assert run.outcome == "ok"
    assert "4 tool uses" in run.summary and "12,844 tokens" in run.summary
    assert run.sources[0].field == "arguments.description"
    # The sub-agent's own reads belong to its own conversation.
    reads = [e for e in examples_facts.events if e.conversation_id == CLAUDE_AGENT]
    assert [e.title for e in reads] == ["Read invoice/export.py"]


def test_the_codex_vitest_failure_is_a_test_run_that_tests_the_file_it_names(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    run = only(events_of(examples_facts, "test_run", VITEST_CALL))
    test = entity(examples_facts, "test", "vitest test/exportLedger.test.ts")
    test_file = entity(examples_facts, "file", "test/exportLedger.test.ts")
    assert run.outcome == "failed"
    assert run.title == "vitest test/exportLedger.test.ts failed (1 failed, 2 passed)"
    assert run.entity_ids[0] == test.entity_id
    assert cited(examples_batch, run, "arguments.cmd") == [
        "npx vitest run test/exportLedger.test.ts"
    ]
    assert cited(examples_batch, run, "result_text") == ["Tests  1 failed | 2 passed (3)"]
    (relation,) = examples_facts.relations
    assert (relation.from_entity_id, relation.type, relation.to_entity_id) == (
        test.entity_id,
        "tests",
        test_file.entity_id,
    )
    assert relation.reason == (
        "`vitest test/exportLedger.test.ts` names test/exportLedger.test.ts as the tests to run"
    )


def test_one_apply_patch_creates_and_edits_the_files_its_headers_name(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    events = [e for e in examples_facts.events if any(r.source_id == PATCH_CALL for r in e.sources)]
    assert [(e.kind, e.title) for e in events] == [
        ("file_edit", "Edited src/jobs/exportLedger.ts"),
        ("file_create", "Created migrations/0007_ledger_export_key.sql"),
        ("file_edit", "Edited test/exportLedger.test.ts"),
    ]
    for event in events:
        assert cited(examples_batch, event, "arguments") == [event.title.split(" ", 1)[1]]


def test_a_different_command_passing_does_not_close_the_failing_tests_or_migration(
    examples_facts: BatchFacts,
) -> None:
    items, resolved = derive_open_items(examples_facts.events)
    vitest = entity(examples_facts, "test", "vitest test/exportLedger.test.ts")
    migrate = entity(examples_facts, "command", "npm run db:migrate")
    tsc = entity(examples_facts, "command", "npx tsc --noEmit -p .")
    keys = {i.key for i in items}
    assert open_item_key(vitest.entity_id) in keys
    assert open_item_key(migrate.entity_id) in keys
    assert open_item_key(tsc.entity_id) in resolved
    migrate_item = next(i for i in items if i.key == open_item_key(migrate.entity_id))
    last = only(events_of(examples_facts, "command", MIGRATE_CALLS[-1]))
    assert migrate_item.sources == last.sources
    assert migrate_item.title == "npm run db:migrate still failing"


def test_the_codex_turn_is_a_task_that_went_from_running_to_completed(
    examples_facts: BatchFacts,
) -> None:
    task_events = [e for e in examples_facts.events if e.kind == "task_status"]
    assert [(e.title.rsplit(": ", 1)[1], e.outcome) for e in task_events] == [
        ("running", "unknown"),
        ("completed", "ok"),
    ]
    (task,) = [e for e in examples_facts.entities if e.kind == "task"]
    assert task.identity_key == f"{CODEX}:turn:01a20cd6-f1d3-7673-a6ef-01a1bcc3323c"
    assert {e.entity_ids for e in task_events} == {(task.entity_id,)}


def test_messages_yield_no_structural_facts_but_a_users_request_opens_an_episode(
    examples_facts: BatchFacts, examples_batch: SourceBatch
) -> None:
    messages = {s.source_id for s in examples_batch.sources if s.source_type == "message"}
    requests = {
        s.source_id
        for s in examples_batch.sources
        if s.message is not None
        and s.message.role == "user"
        and s.message.kind == "prompt"
        and examples_batch.conversations[s.conversation_id].kind == "main"
    }
    assert messages and requests
    citing = {r.source_id for e in examples_facts.entities for r in e.sources}
    citing |= {r.source_id for e in examples_facts.events if e.kind != "episode" for r in e.sources}
    assert not citing & messages
    episodes = [e for e in examples_facts.events if e.kind == "episode"]
    assert {r.source_id for e in episodes for r in e.sources} == requests
    assert all(len(e.sources) == 1 and e.sources[0].field == "text" for e in episodes)


@pytest.mark.parametrize(
    ("call", "kind", "field", "text"),
    [
        (f"{CODEX}:call:call_nnwukA1gMAkX0dN8JcyuUd8D", "file_read", "arguments.cmd",
         "src/jobs/exportLedger.ts"),
        (f"{CODEX}:call:call_qMsilwnruRj272WBKhr9swEv", "file_read", "arguments.cmd",
         "test/exportLedger.test.ts"),
        (MIGRATE_CALLS[0], "command", "result_text", "Error: connect ECONNREFUSED 127.0.0.1:5432"),
        (TSC_CALL, "command", "result_text", "Process exited with code 0"),
    ],
)  # fmt: skip
def test_codex_shell_facts_cite_exact_characters(
    examples_facts: BatchFacts, examples_batch: SourceBatch, call: str, kind: str, field: str,
    text: str,
) -> None:  # fmt: skip
    event = only(events_of(examples_facts, kind, call))
    assert text in cited(examples_batch, event, field)
