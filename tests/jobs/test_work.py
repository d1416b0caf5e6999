"""The job interface on the embedded store, the review job's hand-over and take-over,
and the procrastinate app's tasks, locks and retry decisions (no server needed)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from proctor.cli.main import cli
from proctor.errors import BusyError, ModelError, ReviewStateError, StoreError
from proctor.ingest import ingest
from proctor.jobs import (
    ExecutingElsewhere,
    InProcessJobs,
    is_transient,
    jobs_for,
    run_review_job,
    uses_queue,
)
from proctor.review import ReviewRequest, begin_review
from proctor.store import ReviewRunRecord, SqlStore, open_store
from proctor.store import _schema as t
from tests.backends import ON_POSTGRES
from tests.conftest import EXAMPLES_DIR

embedded_only = pytest.mark.skipif(
    ON_POSTGRES, reason="the suite runs on PostgreSQL: there is no embedded store to test"
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(tmp_path / "proctor.db")
    ingest(opened, [EXAMPLES_DIR])
    try:
        yield opened
    finally:
        opened.close()


def _dead_owner() -> str:
    """``host:pid`` of a process that has exited."""
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)  # fmt: skip
    return f"{socket.gethostname()}:{finished.stdout.strip()}"


def _hold_slot_as(store: SqlStore, run_id: str, owner: str) -> None:
    with store._write() as c:
        c.execute(update(t.review_slot).where(t.review_slot.c.run_id == run_id).values(owner=owner))


@embedded_only
def test_the_embedded_store_runs_jobs_in_process() -> None:
    sqlite = open_store()
    try:
        assert not uses_queue(sqlite)
        assert isinstance(jobs_for(sqlite), InProcessJobs)
        assert sqlite.dialect == "sqlite"
    finally:
        sqlite.close()


def test_only_transient_failures_are_retried() -> None:
    for kind in ("timeout", "rate_limited", "server", "connection"):
        assert is_transient(ModelError(kind, "try again"))
    for kind in ("config", "auth", "rejected", "bad_response", "length"):
        assert not is_transient(ModelError(kind, "fix it"))
    assert is_transient(StoreError("the database went away"))
    assert is_transient(BusyError("BUSY"))
    assert not is_transient(ReviewStateError("cancelled"))
    assert not is_transient(ValueError("a bug"))


def test_a_handed_over_run_is_executed_by_the_job_and_published_once(store: SqlStore) -> None:
    run = begin_review(store, ReviewRequest(), semantic=None)
    api_process = f"{socket.gethostname()}:{_live_pid()}"
    _hold_slot_as(store, run.run_id, api_process)  # as if the API process claimed it

    with pytest.raises(BusyError, match="already executing"):
        store.claim_review_slot(run.run_id)  # nobody may take it without the hand-over
    outcome = run_review_job(
        store, run.run_id, handed_by=api_process, connection=None, retried=False
    )

    assert outcome.executed
    assert outcome.status == "completed"
    assert store.review_slot_holder() is None
    again = run_review_job(store, run.run_id, handed_by=api_process, connection=None, retried=True)
    assert not again.executed
    assert again.note == "nothing to do"
    assert len([r for r in store.overview() if r.run_id == run.run_id]) == 1


def test_a_run_whose_worker_died_is_finished_by_the_retried_job(store: SqlStore) -> None:
    run = begin_review(store, ReviewRequest(batch_size=5), semantic=None)
    _hold_slot_as(store, run.run_id, _dead_owner())  # killed mid-run: still "running"

    assert store.review_slot_holder() is None  # a dead holder holds nothing
    outcome = run_review_job(store, run.run_id, handed_by=None, connection=None, retried=True)

    assert outcome.executed
    assert store.review_run(run.run_id).status == "completed"


def test_a_run_interrupted_and_failed_meanwhile_is_resumed_from_its_batches(
    store: SqlStore,
) -> None:
    run = begin_review(store, ReviewRequest(batch_size=5), semantic=None)
    _hold_slot_as(store, run.run_id, _dead_owner())
    assert store.fail_interrupted_reviews() == [run.run_id]
    assert (store.review_run(run.run_id).error or "").startswith("interrupted")

    outcome = run_review_job(store, run.run_id, handed_by=None, connection=None, retried=False)

    assert outcome.executed
    assert store.review_run(run.run_id).status == "completed"


def test_a_run_found_interrupted_between_the_jobs_read_and_its_claim_is_resumed(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retried job reads its run as ``running``; before it claims the slot another
    process notices the dead worker and fails the run as interrupted. The job resumes it
    (it had failed the job for good: "is failed and cannot run")."""
    run = begin_review(store, ReviewRequest(batch_size=5), semantic=None)
    _hold_slot_as(store, run.run_id, _dead_owner())
    read = store.review_run

    def read_then_another_process_notices(run_id: str) -> ReviewRunRecord:
        record = read(run_id)
        monkeypatch.setattr(store, "review_run", read)
        assert store.fail_interrupted_reviews() == [run.run_id]
        return record

    monkeypatch.setattr(store, "review_run", read_then_another_process_notices)
    outcome = run_review_job(store, run.run_id, handed_by=None, connection=None, retried=True)

    assert outcome.executed
    assert store.review_run(run.run_id).status == "completed"


def test_a_job_leaves_alone_runs_that_failed_for_a_reason_or_were_paused(store: SqlStore) -> None:
    run = begin_review(store, ReviewRequest(), semantic=None)
    store.set_review_status(run.run_id, "failed", error="the model refused", finished=True)
    store.release_review_slot(run.run_id)

    outcome = run_review_job(store, run.run_id, handed_by=None, connection=None, retried=False)

    assert not outcome.executed
    assert store.review_run(run.run_id).status == "failed"
    second = begin_review(store, ReviewRequest(), semantic=None)
    store.set_review_status(second.run_id, "paused")
    store.release_review_slot(second.run_id)
    assert not run_review_job(
        store, second.run_id, handed_by=None, connection=None, retried=True
    ).executed
    assert store.review_run(second.run_id).status == "paused"


def test_a_job_waits_while_another_live_worker_executes_its_run_and_finishes_it_if_that_dies(
    store: SqlStore,
) -> None:
    run = begin_review(store, ReviewRequest(batch_size=5), semantic=None)
    other_worker = f"{socket.gethostname()}:{_live_pid()}"
    _hold_slot_as(store, run.run_id, other_worker)

    with pytest.raises(ExecutingElsewhere, match="another worker"):
        run_review_job(store, run.run_id, handed_by=None, connection=None, retried=True)
    assert store.review_slot_held(run.run_id)  # left to its executor
    assert store.review_run(run.run_id).status == "running"
    # That worker is killed: the job's next attempt resumes the run and publishes it.
    _hold_slot_as(store, run.run_id, _dead_owner())
    outcome = run_review_job(store, run.run_id, handed_by=None, connection=None, retried=True)

    assert outcome.executed
    assert store.review_run(run.run_id).status == "completed"


@embedded_only
def test_the_sqlite_slot_stays_one_across_scopes(store: SqlStore) -> None:
    projects = [p.name for p in store.projects()]
    assert len(projects) >= 2
    first = begin_review(store, ReviewRequest(project=projects[0]), semantic=None)
    _hold_slot_as(store, first.run_id, f"{socket.gethostname()}:{_live_pid()}")

    with pytest.raises(BusyError, match="BUSY"):
        begin_review(store, ReviewRequest(project=projects[1]), semantic=None)


@embedded_only
def test_the_worker_on_sqlite_says_it_has_no_queue_and_runs_due_plans() -> None:
    result = CliRunner().invoke(cli, ["worker", "--once", "--concurrency", "3"])

    assert result.exit_code == 0, result.output
    assert "--concurrency applies to PostgreSQL workers" in result.output
    assert "The supervisor app is disabled" in result.output


@dataclass
class _Job:
    attempts: int


def test_the_worker_app_has_every_task_locks_and_the_periodic_schedule() -> None:
    pytest.importorskip("procrastinate")
    from proctor.jobs._queue import _retry_strategy, build_worker_app

    app = build_worker_app("postgresql://nobody@127.0.0.1:1/none")  # nothing connects yet

    names = set(app.tasks)
    assert {
        "proctor.review",
        "proctor.supervise",
        "proctor.phrase_suggestions",
        "proctor.heartbeat_tick",
        "proctor.supervise_due",
        "proctor.retry_stalled",
    } <= names
    assert app.tasks["proctor.heartbeat_tick"].lock == "heartbeat"
    assert app.tasks["proctor.heartbeat_tick"].queueing_lock == "heartbeat"
    periodic = {p.task.name for p in app.periodic_registry.periodic_tasks.values()}
    assert periodic == {"proctor.heartbeat_tick", "proctor.supervise_due", "proctor.retry_stalled"}
    retry = _retry_strategy()
    assert retry.get_retry_decision(exception=ModelError("timeout", "slow"), job=_Job(0))
    assert retry.get_retry_decision(exception=ModelError("config", "x"), job=_Job(0)) is None
    assert retry.get_retry_decision(exception=StoreError("gone"), job=_Job(5)) is None
    elsewhere = ExecutingElsewhere("run 1234 is executing in another worker")
    assert is_transient(elsewhere)
    assert retry.get_retry_decision(exception=elsewhere, job=_Job(500))  # while it executes


def _live_pid() -> int:
    """A process other than this one that is alive for the whole test: our parent."""
    import os

    return os.getppid()
