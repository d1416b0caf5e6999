"""Supervision sessions and runs in the store on every backend (SPEC SUP-1, SUP-2, SUP-9)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from proctor.errors import NotFoundError
from proctor.models import AttemptUsage, ModelConnection
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store._supervision_store import (
    ABANDONED,
    ClaimVerdict,
    ClaimView,
    RunClaim,
    RunEnd,
    SupervisionSession,
)
from tests.builders import conversation_bundle

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
CONNECTION = ModelConnection(
    name="scripted", provider="openai", model="m", base_url="http://127.0.0.1:1/v1"
)


def _session(target_id: str = "test:conv-1", **changes: object) -> SupervisionSession:
    session = SupervisionSession(
        session_id=f"s-{target_id}",
        target_type="conversation",
        target_id=target_id,
        mode="general",
        triggers=("after_reply",),
        every_n_steps=None,
        throttle_seconds=30.0,
        budget_calls=10,
        budget_tokens=None,
        budget_period_seconds=3600.0,
        enabled=True,
        state="active",
        last_run_at=None,
        last_event_index=2,
        pending=False,
        created_at=NOW,
        updated_at=NOW,
    )
    return dataclasses.replace(session, **changes)  # type: ignore[arg-type]


def _end(last_event_index: int | None, status: str = "ok") -> RunEnd:
    return RunEnd(status, 1, "scripted", "m", None, 0, 100, 20, 900, last_event_index)


def _claim(target_id: str = "test:conv-1", at: datetime = NOW) -> RunClaim:
    return RunClaim(target_id, "after_reply", "general", at, at - timedelta(minutes=21))


def _allow(view: ClaimView) -> ClaimVerdict:
    return (
        ClaimVerdict("running", mark_pending=True) if view.running else ClaimVerdict(state="active")
    )


@pytest.fixture
def stored(store: SqlStore) -> SqlStore:
    store.write_conversation(prepare_bundle(conversation_bundle("test:conv-1")))
    store.write_conversation(prepare_bundle(conversation_bundle("test:conv-2")))
    return store


def test_a_session_is_replaced_by_target_keeping_its_id_and_creation(stored: SqlStore) -> None:
    assert stored.supervision_session("test:conv-1") is None
    first = stored.put_supervision_session(_session())
    later = NOW + timedelta(hours=1)
    again = stored.put_supervision_session(
        _session(
            session_id="other", mode="risk", created_at=later, triggers=("key_event", "run_end")
        )
    )
    assert (again.session_id, again.created_at) == (first.session_id, NOW)
    assert (again.mode, again.triggers) == ("risk", ("key_event", "run_end"))
    assert stored.supervision_session("test:conv-1") == again


def test_sessions_of_changed_conversations_include_their_tasks(stored: SqlStore) -> None:
    stored.put_supervision_session(_session("test:conv-1"))
    stored.put_supervision_session(_session("test:conv-1:t1", target_type="task"))
    stored.put_supervision_session(_session("test:conv-2", enabled=False, state="disabled"))
    inside = stored.supervision_sessions(conversation_ids=["test:conv-1"])
    assert [s.target_id for s in inside] == ["test:conv-1", "test:conv-1:t1"]
    assert stored.supervision_sessions(conversation_ids=["test:conv-2"], enabled_only=True) == []
    assert len(stored.supervision_sessions()) == 3


def test_a_claim_starts_one_run_and_a_second_claim_marks_the_session_pending(
    stored: SqlStore,
) -> None:
    stored.put_supervision_session(_session(pending=True, state="paused: budget"))
    claimed = stored.claim_supervision_run(_claim(), _allow)
    assert claimed.run is not None and claimed.run.status == "running"
    assert claimed.session is not None
    assert (claimed.session.last_run_at, claimed.session.pending, claimed.session.state) == (
        NOW,
        False,
        "active",
    )
    refused = stored.claim_supervision_run(_claim(at=NOW + timedelta(seconds=5)), _allow)
    assert (refused.run, refused.verdict.refused) == (None, "running")
    assert refused.session is not None and refused.session.pending
    assert [r.run_id for r in stored.supervision_runs()] == [claimed.run.run_id]


def test_a_run_left_running_by_a_stopped_process_is_closed_before_the_next_claim(
    stored: SqlStore,
) -> None:
    stored.put_supervision_session(_session())
    abandoned = stored.claim_supervision_run(_claim(), _allow).run
    assert abandoned is not None
    later = stored.claim_supervision_run(_claim(at=NOW + timedelta(hours=1)), _allow)
    assert later.run is not None
    old = next(r for r in stored.supervision_runs() if r.run_id == abandoned.run_id)
    assert (old.status, old.error) == ("failed", ABANDONED)


def test_finishing_a_run_records_it_and_never_moves_the_covered_events_back(
    stored: SqlStore,
) -> None:
    stored.put_supervision_session(_session(last_event_index=2))
    run = stored.claim_supervision_run(_claim(), _allow).run
    assert run is not None
    ended = stored.finish_supervision_run(run.run_id, _end(7), now=NOW + timedelta(seconds=3))
    assert (ended.status, ended.input_tokens, ended.window_chars) == ("ok", 100, 900)
    assert ended.finished_at == NOW + timedelta(seconds=3)
    session = stored.supervision_session("test:conv-1")
    assert session is not None and session.last_event_index == 7
    second = stored.claim_supervision_run(_claim(at=NOW + timedelta(minutes=1)), _allow).run
    assert second is not None
    stored.finish_supervision_run(second.run_id, _end(5), now=NOW)
    stored.finish_supervision_run(second.run_id, _end(None, "failed"), now=NOW)
    session = stored.supervision_session("test:conv-1")
    assert session is not None and session.last_event_index == 7
    with pytest.raises(NotFoundError):
        stored.finish_supervision_run("nope", _end(1), now=NOW)


def test_usage_counts_the_attempts_and_tokens_of_the_sessions_runs_in_the_period(
    stored: SqlStore,
) -> None:
    stored.put_supervision_session(_session("test:conv-1"))
    stored.put_supervision_session(_session("test:conv-2"))
    old = stored.claim_supervision_run(_claim(at=NOW - timedelta(hours=2)), _allow).run
    assert old is not None
    stored.finish_supervision_run(old.run_id, _end(3), now=NOW)
    current = stored.claim_supervision_run(_claim(), _allow).run
    other = stored.claim_supervision_run(_claim("test:conv-2"), _allow).run
    assert current is not None and other is not None
    attempts = (AttemptUsage(1, 100, None, "server", 0.1), AttemptUsage(2, 120, 30, "ok", 0.2))
    for run in (old, current, other):
        stored.record_model_attempts(
            CONNECTION, "supervise", attempts, target_id=run.target_id, run_id=run.run_id
        )
    usage = stored.supervision_usage("s-test:conv-1", since=NOW - timedelta(minutes=1))
    assert (usage.calls, usage.tokens) == (2, 250)
    everything = stored.supervision_usage("s-test:conv-1", since=NOW - timedelta(days=1))
    assert (everything.calls, everything.tokens) == (4, 500)


def test_pending_can_be_cleared(stored: SqlStore) -> None:
    stored.put_supervision_session(_session(pending=True))
    stored.clear_supervision_pending("s-test:conv-1", now=NOW)
    session = stored.supervision_session("test:conv-1")
    assert session is not None and not session.pending


def test_tasks_resolve_by_id_or_unique_prefix(stored: SqlStore) -> None:
    assert stored.task_conversation_id("test:conv-2:t1") == ("test:conv-2:t1", "test:conv-2")
    assert stored.task_conversation_id("test:conv-1:") == ("test:conv-1:t1", "test:conv-1")
    with pytest.raises(NotFoundError, match="several tasks"):
        stored.task_conversation_id("test:conv")
    with pytest.raises(NotFoundError, match="no task matches"):
        stored.task_conversation_id("nothing")
