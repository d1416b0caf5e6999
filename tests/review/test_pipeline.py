"""The one review pipeline on a real SQLite store (SPEC REV-1, REV-5, REV-6, REV-7, REV-10).

The bundled example sessions are imported for real; reviews run without a model
connection (structural layer only) unless a test says otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import insert, select, update

from proctor.errors import BusyError, ReviewStateError
from proctor.ingest import ingest
from proctor.review import (
    ReviewRequest,
    cancel_review,
    pause_review,
    resume_review,
    start_review,
)
from proctor.store import ReviewRunRecord, ReviewScope, SqlStore, open_store
from proctor.store import _schema as t
from tests.conftest import EXAMPLES_DIR

NOTE = "no model connection is configured"


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [EXAMPLES_DIR])
    return store


def _review(store: SqlStore, **options: object) -> ReviewRunRecord:
    request = ReviewRequest(**options)  # type: ignore[arg-type]
    return start_review(store, request, semantic=None, semantic_note=NOTE)


def _source_count(store: SqlStore) -> int:
    with store._read() as conn:
        return len(conn.execute(select(t.sources.c.source_id)).all())


def test_a_review_without_a_model_publishes_the_structural_graph(store: SqlStore) -> None:
    run = _review(store)
    assert run.status == "completed"
    assert not run.active
    assert run.model_calls == 0
    assert run.sources_total == run.sources_done == _source_count(store)
    assert run.result_id is not None
    with store._read() as conn:
        result = conn.execute(select(t.results).where(t.results.c.run_id == run.run_id)).one()
        events = conn.execute(select(t.graph_events)).all()
    assert result.complete
    assert result.coverage["semantic"] == "skipped"
    assert NOTE in result.coverage["semantic_note"]
    assert events, "the examples run commands, tests and edits"
    assert store.checkpoint_count("structural") == run.sources_total
    assert store.checkpoint_count("semantic") == 0


def test_the_summary_counts_each_kind_of_event_in_plain_english(store: SqlStore) -> None:
    run = _review(store)
    with store._read() as conn:
        summary = conn.execute(
            select(t.results.c.summary).where(t.results.c.run_id == run.run_id)
        ).scalar_one()
    counts = summary.split(": ", 1)[1].split(".")[0]
    counted = re.findall(r"(\d+) ([a-z][a-z ]*?)(?= \(|,|$)", counts)
    assert ("task status" in counts) and len(counted) >= 3, summary
    for number, noun in counted:
        # "2 task statuss", "3 url fetchs": a noun ending in s, sh, ch, x or z takes "es"
        assert not re.search(r"(s|sh|ch|x|z)s$", noun), summary
        assert int(number) != 1 or not noun.endswith("s") or noun.endswith("status"), summary


def test_nothing_new_is_no_change_without_reading_anything(store: SqlStore) -> None:
    first = _review(store)
    second = _review(store)
    assert second.status == "no_change"
    assert second.sources_total == 0
    assert second.model_calls == 0
    assert second.result_id is None
    assert store.checkpoint_count("structural") == first.sources_total


def _fingerprints(store: SqlStore) -> dict[tuple[str, str], str]:
    with store._read() as conn:
        rows = conn.execute(
            select(t.sources.c.source_type, t.sources.c.source_id, t.sources.c.fingerprint)
        ).all()
    return {(r.source_type, r.source_id): r.fingerprint for r in rows}


def test_a_revised_message_is_all_that_is_read_again(store: SqlStore, tmp_path: Path) -> None:
    first = _review(store)
    before = _fingerprints(store)
    copy = tmp_path / "codex"
    shutil.copytree(EXAMPLES_DIR / "codex", copy)
    rollout = next(copy.rglob("*.jsonl"))
    original = rollout.read_text(encoding="utf-8")
    edited = original.replace("Verified: the suite passes", "Verified: the suite passes again")
    assert edited != original
    rollout.write_text(edited, encoding="utf-8")
    ingest(store, [copy])
    after = _fingerprints(store)
    changed = {key for key, fingerprint in after.items() if before.get(key) != fingerprint}
    second = _review(store)
    assert second.status == "completed"
    with store._read() as conn:
        read = {
            (r.source_type, r.source_id)
            for r in conn.execute(
                select(t.review_manifest).where(t.review_manifest.c.run_id == second.run_id)
            )
        }
    # The edited assistant message, and the turn-complete event that repeats its text.
    assert read == changed
    assert 1 <= len(read) <= 2 < first.sources_total


def test_a_project_scope_reads_only_that_project(store: SqlStore) -> None:
    projects = store.projects()
    assert len(projects) >= 2
    name = projects[0].name
    run = _review(store, project=name)
    assert run.scope_key == f"project:{projects[0].project_id}"
    assert 0 < run.sources_total < _source_count(store)


def test_reanalyze_reads_the_range_again_without_moving_checkpoints(store: SqlStore) -> None:
    first = _review(store)
    with store._read() as conn:
        before = conn.execute(select(t.review_checkpoints)).all()
    again = _review(store, reanalyze=True)
    assert again.status == "completed"
    assert again.sources_total == first.sources_total
    with store._read() as conn:
        after = conn.execute(select(t.review_checkpoints)).all()
    assert sorted(before) == sorted(after)


def test_a_manual_start_while_another_review_runs_fails_at_once_with_busy(
    store: SqlStore,
) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        other = store.create_review_run(
            ReviewScope(None, None),
            trigger="manual",
            reanalyze=False,
            stages=["structural"],
            batch_size=10,
            batch_chars=10_000,
            connection=None,
            model=None,
        )
        with store._write() as conn:
            conn.execute(
                insert(t.review_slot).values(
                    slot=1, run_id=other.run_id, owner=f"{os.uname().nodename}:{holder.pid}"
                )
            )
        with pytest.raises(BusyError, match="BUSY"):
            _review(store)
        assert [r.run_id for r in store.review_runs()] == [other.run_id]
    finally:
        holder.kill()
        holder.wait()
    assert _review(store).status == "completed", "a dead holder's slot is taken over"


def test_pause_keeps_saved_batches_and_resume_finishes_the_same_run(store: SqlStore) -> None:
    paused: list[str] = []

    def pause_after_first_batch(run: ReviewRunRecord) -> None:
        if not paused:
            paused.append(run.run_id)
            pause_review(store, run.run_id)

    run = start_review(
        store,
        ReviewRequest(batch_size=5),
        semantic=None,
        semantic_note=NOTE,
        progress=pause_after_first_batch,
    )
    assert run.status == "paused"
    assert not run.active
    assert run.batches_done == 1
    assert run.result_id is None
    assert store.checkpoint_count() == 0, "checkpoints move only when the result is published"
    resumed = resume_review(store, run.run_id, semantic=None)
    assert resumed.run_id == run.run_id
    assert resumed.status == "completed"
    assert resumed.batches_done == resumed.batches_total > 1


def test_a_cancelled_run_stops_and_cannot_be_resumed(store: SqlStore) -> None:
    def cancel(run: ReviewRunRecord) -> None:
        cancel_review(store, run.run_id)

    run = start_review(
        store, ReviewRequest(batch_size=5), semantic=None, semantic_note=NOTE, progress=cancel
    )
    assert run.status == "cancelled"
    assert run.shown == "cancelled"
    assert run.result_id is None
    with pytest.raises(ReviewStateError, match="cancelled"):
        resume_review(store, run.run_id, semantic=None)


def test_a_cancel_shows_cancelling_while_the_worker_still_stops(store: SqlStore) -> None:
    seen: list[str] = []

    def cancel(run: ReviewRunRecord) -> None:
        if not seen:
            seen.append(cancel_review(store, run.run_id).shown)

    start_review(
        store, ReviewRequest(batch_size=5), semantic=None, semantic_note=NOTE, progress=cancel
    )
    assert seen == ["cancelling"]


def test_runs_left_running_by_a_dead_process_become_failed_and_resumable(
    store: SqlStore,
) -> None:
    def crash(run: ReviewRunRecord) -> None:
        raise SystemExit("the process died")

    with pytest.raises(SystemExit):
        start_review(
            store, ReviewRequest(batch_size=5), semantic=None, semantic_note=NOTE, progress=crash
        )
    (run,) = store.review_runs()
    # What a killed process leaves behind: still running, active, holding the slot.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with store._write() as conn:
        conn.execute(update(t.review_runs).values(status="running", active=True))
        conn.execute(
            update(t.review_slot).values(
                run_id=run.run_id, owner=f"{os.uname().nodename}:{dead.pid}"
            )
        )
    assert store.fail_interrupted_reviews() == [run.run_id]
    failed = store.review_run(run.run_id)
    assert failed.status == "failed"
    assert "interrupted" in (failed.error or "")
    assert failed.batches_done == 1
    resumed = resume_review(store, run.run_id, semantic=None)
    assert resumed.status == "completed"


def test_a_conversation_deleted_during_the_run_is_omitted_and_counted(store: SqlStore) -> None:
    deleted: list[str] = []

    def delete_codex(run: ReviewRunRecord) -> None:
        if deleted:
            return
        codex = [
            c.conversation_id
            for c in store.list_conversations()
            if c.conversation.format.startswith("codex")
        ]
        deleted.extend(codex)
        for conversation_id in codex:
            store.delete_conversation(conversation_id)

    run = start_review(
        store, ReviewRequest(batch_size=5), semantic=None, semantic_note=NOTE, progress=delete_codex
    )
    assert deleted
    assert run.status == "completed"
    with store._read() as conn:
        coverage = conn.execute(
            select(t.results.c.coverage).where(t.results.c.run_id == run.run_id)
        ).scalar_one()
    assert coverage["sources_omitted"] > 0
    assert coverage["sources_read"] + coverage["sources_omitted"] == coverage["sources_total"]


def test_a_scheduled_review_waits_for_the_slot_instead_of_failing(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proctor.review import _pipeline
    from proctor.store._review_store import SLOTS_VARIABLE

    monkeypatch.setenv(SLOTS_VARIABLE, "1")  # PostgreSQL has more slots; SQLite always one
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    with store._write() as conn:
        conn.execute(
            insert(t.review_slot).values(
                slot=1, run_id="held", owner=f"{os.uname().nodename}:{holder.pid}"
            )
        )
    waits: list[float] = []

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return float(len(waits))

        @staticmethod
        def sleep(seconds: float) -> None:
            waits.append(seconds)
            if len(waits) == 3:  # the other review ends while this one waits
                holder.kill()
                holder.wait()

    monkeypatch.setattr(_pipeline, "time", Clock)
    try:
        run = _review(store, trigger="scheduled")
    finally:
        holder.kill()
        holder.wait()
    assert len(waits) == 3
    assert run.status == "completed"
    assert run.trigger == "scheduled"


def test_the_published_graph_is_searchable(store: SqlStore) -> None:
    from proctor.search import search

    _review(store)
    found = search(store, "database is locked export", limit=20, encoder=None)
    kinds = {hit.doc_type for hit in found.hits}
    assert "event" in kinds, kinds
