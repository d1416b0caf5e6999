"""The review execution slot on PostgreSQL (REV-6 scaled out): per scope, bounded, and
serialised across connections, so concurrent claims never both win.

Needs ``PROCTOR_TEST_POSTGRES_URL`` (``bash scripts/test-postgres.sh`` prints one).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import update

from proctor.errors import BusyError
from proctor.ingest import ingest
from proctor.review import ReviewRequest, begin_review, resolve_scope
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from tests.conftest import EXAMPLES_DIR

psycopg = pytest.importorskip("psycopg")
ADMIN_URL = os.environ.get("PROCTOR_TEST_POSTGRES_URL", "").strip()
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        not ADMIN_URL,
        reason="no PostgreSQL: set PROCTOR_TEST_POSTGRES_URL "
        "(`bash scripts/test-postgres.sh` starts the local cluster and prints one)",
    ),
]


@pytest.fixture
def store() -> Iterator[SqlStore]:
    name = f"proctor_slots_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    opened = open_store(url=f"{ADMIN_URL.rpartition('/')[0]}/{name}")
    try:
        ingest(opened, [EXAMPLES_DIR])
        yield opened
    finally:
        opened.close()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _held_elsewhere(store: SqlStore, run_id: str) -> None:
    """Make a live process other than this one the run's holder (our parent)."""
    with store._write() as c:
        c.execute(
            update(t.review_slot)
            .where(t.review_slot.c.run_id == run_id)
            .values(owner=f"{socket.gethostname()}:{os.getppid()}")
        )


def test_reviews_of_different_scopes_execute_at_once_and_one_scope_stays_single(
    store: SqlStore,
) -> None:
    first, second = (p.name for p in store.projects()[:2])
    a = begin_review(store, ReviewRequest(project=first), semantic=None)
    _held_elsewhere(store, a.run_id)

    b = begin_review(store, ReviewRequest(project=second), semantic=None)

    assert store.review_slot_held(a.run_id) and store.review_slot_held(b.run_id)
    with pytest.raises(BusyError, match="BUSY"):
        begin_review(store, ReviewRequest(project=first), semantic=None)
    assert store.review_slot_holder(a.scope_key) == a.run_id
    assert store.review_slot_holder(resolve_scope(store, ReviewRequest()).key) is None


def test_no_more_scopes_execute_than_there_are_slots(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_REVIEW_SLOTS", "1")
    first, second = (p.name for p in store.projects()[:2])
    a = begin_review(store, ReviewRequest(project=first), semantic=None)
    _held_elsewhere(store, a.run_id)

    with pytest.raises(BusyError, match="BUSY"):
        begin_review(store, ReviewRequest(project=second), semantic=None)
    assert store.review_slot_holder(resolve_scope(store, ReviewRequest(project=second)).key) == (
        a.run_id
    )


def test_concurrent_claims_for_one_scope_let_exactly_one_run_execute(store: SqlStore) -> None:
    project = store.projects()[0].name
    runs = [
        store.create_review_run(
            resolve_scope(store, ReviewRequest(project=project)),
            trigger="manual",
            reanalyze=False,
            stages=["structural"],
            batch_size=150,
            batch_chars=60_000,
            connection=None,
            model=None,
        )
        for _ in range(8)
    ]
    start = threading.Barrier(len(runs))
    won: list[str] = []
    busy: list[str] = []

    def claim(run_id: str) -> None:
        start.wait()
        try:
            store.claim_review_slot(run_id)
            won.append(run_id)
        except BusyError:
            busy.append(run_id)

    threads = [threading.Thread(target=claim, args=(r.run_id,)) for r in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(won) == 1
    assert len(busy) == len(runs) - 1
