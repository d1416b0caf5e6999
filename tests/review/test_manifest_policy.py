"""The review run's policy (REV-1, REV-5 … REV-7): which sources a manifest holds, their
batches, how a saved batch moves them, and who may take the execution slot.

The policy is pure (``proctor.graph``'s manifest policy); hypothesis checks its
properties on plain values. The store builds a manifest in one SQL statement from the
policy's rule: the last tests compare that statement's manifest with ``plan_manifest`` on
the example sessions, in every scope, stage and checkpoint state they try.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import and_, func, select

from proctor.graph import (
    SLOT_STALE_AFTER,
    ManifestCandidate,
    ManifestRule,
    SlotHolder,
    batch_number,
    blocking_holder,
    choose_slot,
    enters_manifest,
    entry_changes,
    holder_alive,
    manifest_rule,
    plan_manifest,
)
from proctor.ingest import ingest
from proctor.store import ReviewScope, SqlStore, open_store
from proctor.store import _schema as t
from proctor.store._review_store import _content_rows
from tests.conftest import EXAMPLES_DIR

FAST = settings(max_examples=150, deadline=None)
STAGES = ("structural", "semantic")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOST = "this-host"

times = st.one_of(st.none(), st.integers(0, 10).map(lambda h: T0 + timedelta(hours=h)))
candidates = st.lists(
    st.builds(
        ManifestCandidate,
        source_type=st.sampled_from(("message", "tool_call")),
        source_id=st.sampled_from(tuple("abcdefgh")),
        conversation_id=st.sampled_from(("c1", "c2", "c3")),
        conversation_started=times,
        seq=st.one_of(st.none(), st.integers(0, 20)),
        project_id=st.sampled_from(("p1", "p2")),
        when=times,
        fingerprint=st.sampled_from(("f1", "f2")),
        checkpoints=st.dictionaries(st.sampled_from(STAGES), st.sampled_from(("f1", "f2"))),
        size=st.integers(0, 400),
    ),
    max_size=12,
    unique_by=lambda c: (c.source_type, c.source_id),
)
rules = st.builds(
    manifest_rule,
    st.sampled_from((None, "p1")),
    times,
    times,
    st.sampled_from((("structural",), STAGES)),
    reanalyze=st.booleans(),
)


@FAST
@given(sources=candidates, rule=rules)
@pytest.mark.slow
def test_a_manifest_holds_exactly_the_changed_sources_of_its_scope_and_range(
    sources: list[ManifestCandidate], rule: ManifestRule
) -> None:
    planned = [entry for entry, _ in plan_manifest(sources, rule, 5, 1000)]
    in_range = [
        s
        for s in sources
        if (rule.project_id is None or s.project_id == rule.project_id)
        and (rule.time_from is None or (s.when is not None and s.when >= rule.time_from))
        and (rule.time_to is None or (s.when is not None and s.when < rule.time_to))
    ]
    if rule.pending_stages is None:  # reanalyze: every source of the range
        expected = in_range
    else:
        expected = [
            s
            for s in in_range
            if any(s.checkpoints.get(stage) != s.fingerprint for stage in rule.pending_stages)
        ]
    assert sorted(map(id, planned)) == sorted(map(id, expected))


@FAST
@given(sources=candidates, stages=st.sampled_from((("structural",), STAGES)))
@pytest.mark.slow
def test_a_source_checkpointed_at_its_fingerprint_for_every_stage_never_enters_again(
    sources: list[ManifestCandidate], stages: tuple[str, ...]
) -> None:
    rule = manifest_rule(None, None, None, stages, reanalyze=False)
    done = [
        ManifestCandidate(
            **{
                **{name: getattr(s, name) for name in ManifestCandidate.__slots__},
                "checkpoints": dict.fromkeys(stages, s.fingerprint),
            }
        )
        for s in sources
    ]
    assert plan_manifest(done, rule, 5, 1000) == []
    reanalyze = manifest_rule(None, None, None, stages, reanalyze=True)
    assert all(enters_manifest(s, reanalyze) for s in done)


@FAST
@given(
    sizes=st.lists(st.integers(0, 3000), max_size=40),
    batch_size=st.integers(1, 8),
    batch_chars=st.integers(1, 5000),
)
def test_batches_follow_the_manifest_and_close_at_their_size_or_characters(
    sizes: list[int], batch_size: int, batch_chars: int
) -> None:
    chars = 0
    numbers: list[int] = []
    for position, size in enumerate(sizes):
        chars += size + 1
        number = batch_number(position, chars, batch_size, batch_chars)
        # Everything up to the end of batch b fits b + 1 batches of either bound.
        assert position < (number + 1) * batch_size
        assert chars <= (number + 1) * batch_chars
        if numbers and number != numbers[-1]:  # a batch closes only when it is full
            full_by_count = position >= (numbers[-1] + 1) * batch_size
            assert full_by_count or chars > (numbers[-1] + 1) * batch_chars
        numbers.append(number)
    assert numbers == sorted(numbers)
    # Not "at most batch_size entries a batch": after a source that jumps the count by
    # characters, the positional count can land in the same batch (kept: unchanged rows).


keys = st.tuples(st.sampled_from(("message", "tool_call")), st.sampled_from(tuple("abcdef")))


@FAST
@given(
    positions=st.dictionaries(keys, st.integers(0, 100)),
    read=st.dictionaries(keys, st.sampled_from(("f1", "f2"))),
    omitted=st.lists(keys, max_size=4),
    batch_state=st.sampled_from(("done", "failed")),
)
def test_a_saved_batch_moves_only_its_own_entries_and_done_only_when_the_batch_is(
    positions: dict[tuple[str, str], int],
    read: dict[tuple[str, str], str],
    omitted: list[tuple[str, str]],
    batch_state: str,
) -> None:
    changes = entry_changes(positions, read, omitted, batch_state)
    assert changes.state == ("done" if batch_state == "done" else "pending")
    assert changes.read == [(positions[k], f) for k, f in read.items() if k in positions]
    assert changes.omitted == [positions[k] for k in omitted if k in positions]


# -- the slot -----------------------------------------------------------------------------

owners = st.sampled_from((f"{HOST}:11", f"{HOST}:12", "other-host:11", "other-host:12", None))
holders = st.lists(
    st.builds(
        SlotHolder,
        slot=st.integers(1, 4),
        run_id=st.sampled_from(("run-1", "run-2", "run-3")),
        owner=owners,
        heartbeat_at=st.one_of(
            st.none(), st.integers(0, 300).map(lambda s: T0 - timedelta(seconds=s))
        ),
        scope_key=st.sampled_from(("all", "project:p1", None)),
    ),
    max_size=4,
    unique_by=(lambda h: h.slot, lambda h: h.run_id),
)
running_pids = st.sets(st.sampled_from((11, 12)))


@FAST
@given(owner=owners, beat=st.integers(0, 300), running=running_pids)
def test_a_holder_is_alive_while_its_process_runs_here_or_it_beat_recently_elsewhere(
    owner: str | None, beat: int, running: set[int]
) -> None:
    heartbeat = T0 - timedelta(seconds=beat)
    alive = holder_alive(owner, heartbeat, T0, host=HOST, process_exists=running.__contains__)
    if owner is None:
        assert not alive
    elif owner.startswith(f"{HOST}:"):
        assert alive == (int(owner.rpartition(":")[2]) in running)  # whatever its heartbeat
    else:
        assert alive == (timedelta(seconds=beat) < SLOT_STALE_AFTER)


def _live(rows: Sequence[SlotHolder], running: set[int]) -> list[SlotHolder]:
    def alive(h: SlotHolder) -> bool:
        return holder_alive(
            h.owner, h.heartbeat_at, T0, host=HOST, process_exists=running.__contains__
        )

    return sorted((h for h in rows if alive(h)), key=lambda h: h.slot)


@FAST
@given(
    rows=holders,
    running=running_pids,
    run_id=st.sampled_from(("run-1", "run-2", "run-new")),
    scope=st.sampled_from(("all", "project:p1", "project:p2")),
    capacity=st.integers(1, 4),
    handed_by=st.sampled_from((None, f"{HOST}:11", "other-host:12")),
)
def test_a_live_holders_slot_is_never_taken_and_a_stale_ones_is(
    rows: list[SlotHolder],
    running: set[int],
    run_id: str,
    scope: str,
    capacity: int,
    handed_by: str | None,
) -> None:
    live = _live(rows, running)
    me = f"{HOST}:99"
    choice = choose_slot(run_id, scope, live, capacity, owner=me, handed_by=handed_by)
    own = [h for h in live if h.run_id == run_id]
    others = {h.slot for h in live if h.run_id != run_id}
    if choice.slot is not None:
        assert choice.slot not in others  # a live holder is never displaced
        assert 1 <= choice.slot <= capacity or own
        if own:  # the run's own live slot, only when handed over by its holder
            assert choice.slot == own[0].slot
            assert handed_by is not None and own[0].owner in (handed_by, me)
        else:
            assert all(h.scope_key != scope for h in live)
            free = [n for n in range(1, capacity + 1) if n not in others]
            assert choice.slot == free[0]  # a stale holder's slot counts as free
    else:
        assert choice.busy is not None and choice.busy in live
        same_scope = [h for h in live if h.scope_key == scope]
        assert own or same_scope or len(live) >= capacity


def test_the_slot_of_a_dead_process_here_or_a_silent_one_elsewhere_is_taken_over() -> None:
    dead_here = SlotHolder(1, "run-1", f"{HOST}:11", T0, "all")
    silent = SlotHolder(2, "run-2", "other-host:7", T0 - SLOT_STALE_AFTER, "project:p1")
    beating = SlotHolder(3, "run-3", "other-host:8", T0 - timedelta(seconds=5), "project:p2")
    live = _live([dead_here, silent, beating], running={12})
    assert live == [beating]
    for scope in ("all", "project:p1"):
        choice = choose_slot("run-new", scope, live, 3, owner=f"{HOST}:99", handed_by=None)
        assert choice.slot == 1
    choice = choose_slot("run-new", "project:p2", live, 3, owner=f"{HOST}:99", handed_by=None)
    assert choice.slot is None and choice.busy == beating


@FAST
@given(rows=holders, running=running_pids, capacity=st.integers(1, 4))
def test_a_run_waits_for_exactly_the_holder_that_would_keep_it_out(
    rows: list[SlotHolder], running: set[int], capacity: int
) -> None:
    live = _live(rows, running)
    for scope in ("all", "project:p1", "project:p2"):
        blocker = blocking_holder(scope, live, capacity)
        choice = choose_slot("run-new", scope, live, capacity, owner=f"{HOST}:99", handed_by=None)
        assert (blocker is None) == (choice.slot is not None)
        if blocker is not None:
            assert blocker == choice.busy
    assert blocking_holder(None, live, capacity) == (live[0] if live else None)


# -- the store executes the manifest policy ----------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    store = open_store(tmp_path / "proctor.db")
    ingest(store, [EXAMPLES_DIR])
    return store


def _candidates(store: SqlStore, scope_key: str) -> list[ManifestCandidate]:
    """Every stored source as the policy sees it, read straight from the tables."""
    s, conv, ck = t.sources, t.conversations, t.review_checkpoints
    content = _content_rows()
    with store._read() as c:
        checkpoints: dict[tuple[str, str], dict[str, str]] = {}
        for row in c.execute(select(ck).where(ck.c.scope_key == scope_key)):
            checkpoints.setdefault((row.source_type, row.source_id), {})[row.stage] = (
                row.fingerprint
            )
        rows = c.execute(
            select(
                s.c.source_type,
                s.c.source_id,
                s.c.conversation_id,
                s.c.fingerprint,
                s.c.occurred_at,
                conv.c.started_at,
                conv.c.project_id,
                content.c.seq,
                content.c.size,
            ).select_from(
                s.join(conv, conv.c.conversation_id == s.c.conversation_id).outerjoin(
                    content,
                    and_(
                        content.c.source_type == s.c.source_type,
                        content.c.source_id == s.c.source_id,
                    ),
                )
            )
        ).all()
    return [
        ManifestCandidate(
            source_type=r.source_type,
            source_id=r.source_id,
            conversation_id=r.conversation_id,
            conversation_started=r.started_at,
            seq=r.seq,
            project_id=r.project_id,
            when=r.occurred_at or r.started_at,
            fingerprint=r.fingerprint,
            checkpoints=checkpoints.get((r.source_type, r.source_id), {}),
            size=r.size or 0,
        )
        for r in rows
    ]


def _stored_manifest(store: SqlStore, run_id: str) -> list[tuple[str, str, int]]:
    m = t.review_manifest.c
    with store._read() as c:
        rows = c.execute(
            select(m.source_type, m.source_id, m.batch_no)
            .where(m.run_id == run_id)
            .order_by(m.position)
        ).all()
    return [(a, b, int(n)) for a, b, n in rows]


def _checkpoint_some(store: SqlStore, scope_key: str, stage: str, every: int) -> None:
    """Checkpoint every ``every``-th source (some at a stale fingerprint)."""
    s, ck = t.sources.c, t.review_checkpoints
    run = store.create_review_run(
        ReviewScope(None, None),
        trigger="manual",
        reanalyze=True,
        stages=[stage],
        batch_size=50,
        batch_chars=20000,
        connection=None,
        model=None,
    )
    with store._write() as c:
        rows = c.execute(select(s.source_type, s.source_id, s.fingerprint)).all()
        values = [
            {
                "stage": stage,
                "scope_key": scope_key,
                "source_type": kind,
                "source_id": source_id,
                "fingerprint": fingerprint if n % (2 * every) else "stale",
                "run_id": run.run_id,
                "updated_at": T0,
            }
            for n, (kind, source_id, fingerprint) in enumerate(rows)
            if n % every == 0
        ]
        c.execute(ck.insert(), values)


def test_the_stores_manifest_is_the_policys_plan_in_every_scope_and_state(
    store: SqlStore,
) -> None:
    with store._read() as c:
        projects = [
            p
            for (p,) in c.execute(select(t.projects.c.project_id).order_by(t.projects.c.project_id))
        ]
        span = c.execute(
            select(func.min(t.conversations.c.started_at), func.max(t.conversations.c.started_at))
        ).one()
    middle = span[0] + (span[1] - span[0]) / 2
    scopes = [
        ReviewScope(None, None),
        ReviewScope(projects[0], None),
        ReviewScope(None, None, time_from=middle),
        ReviewScope(None, None, time_to=middle),
    ]
    _checkpoint_some(store, "all", "structural", 3)
    _checkpoint_some(store, "all", "semantic", 2)
    compared = 0
    for scope in scopes:
        for stages in (("structural",), STAGES):
            for reanalyze in (False, True):
                for batch_size, batch_chars in ((3, 200), (50, 20000)):
                    run = store.create_review_run(
                        scope,
                        trigger="manual",
                        reanalyze=reanalyze,
                        stages=stages,
                        batch_size=batch_size,
                        batch_chars=batch_chars,
                        connection=None,
                        model=None,
                    )
                    rule = manifest_rule(
                        scope.project_id,
                        scope.time_from,
                        scope.time_to,
                        stages,
                        reanalyze=reanalyze,
                    )
                    planned = [
                        (entry.source_type, entry.source_id, number)
                        for entry, number in plan_manifest(
                            _candidates(store, scope.key), rule, batch_size, batch_chars
                        )
                    ]
                    assert _stored_manifest(store, run.run_id) == planned
                    compared += len(planned)
    assert compared > 100
