"""Saving a batch costs a bounded number of statements, not one per source (issue 18).

A review used to move every manifest entry with its own UPDATE and count the run's whole
manifest after every batch. Here every statement the store sends while it saves a batch
is counted (an ``executemany`` is one statement): the count is the same for a batch of 5
sources and for one of 150, and small.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, select

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from tests.conftest import EXAMPLES_DIR

MOST_STATEMENTS_PER_BATCH = 12


class Counted:
    """Statements sent during each ``save_review_batch`` call, with the batch's size."""

    def __init__(self) -> None:
        self.saving: int | None = None
        self.saves: list[tuple[int, int]] = []
        """(sources the batch read or omitted, statements sent)"""


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    counts = Counted()
    save = SqlStore.save_review_batch

    def counting_save(self: SqlStore, *args: Any, **kwargs: Any) -> bool:
        counts.saving = 0
        try:
            return save(self, *args, **kwargs)
        finally:
            sources = len(kwargs["read"]) + len(kwargs["omitted"])
            counts.saves.append((sources, counts.saving))
            counts.saving = None

    monkeypatch.setattr(SqlStore, "save_review_batch", counting_save)
    return counts


def _review(tmp_path: Path, name: str, counts: Counted, batch_size: int, *more: Path) -> SqlStore:
    store = open_store(tmp_path / f"{name}.db")
    ingest(store, [EXAMPLES_DIR, *more])

    def count(*args: Any) -> None:
        if counts.saving is not None:
            counts.saving += 1

    event.listen(store._writer, "before_cursor_execute", count)
    run = start_review(
        store, ReviewRequest(batch_size=batch_size), semantic=None, semantic_note="none"
    )
    assert run.status == "completed"
    return store


def test_a_batch_is_saved_with_the_same_few_statements_whatever_its_size(
    tmp_path: Path, counted: Counted, transcripts_dir: Path
) -> None:
    tool_heavy = transcripts_dir / "claude-code" / "marot-spotter" / "tool_heavy.jsonl"
    _review(tmp_path, "small", counted, 5)
    _review(tmp_path, "large", counted, 150, tool_heavy)
    sizes = sorted(sources for sources, _ in counted.saves)
    assert sizes[0] <= 5 and sizes[-1] >= 50, "batches of very different sizes were saved"
    statements = {sent for _, sent in counted.saves}
    assert len(statements) == 1, f"statements per batch vary with its size: {counted.saves}"
    assert statements.pop() <= MOST_STATEMENTS_PER_BATCH


def test_the_run_counts_every_source_it_read_once(
    tmp_path: Path, counted: Counted, transcripts_dir: Path
) -> None:
    store = _review(tmp_path, "counts", counted, 7, transcripts_dir / "codex")
    (run,) = store.review_runs(limit=1)
    m = t.review_manifest.c
    with store._read() as conn:
        states = conn.execute(select(m.state).where(m.run_id == run.run_id)).scalars().all()
    assert run.sources_done == len([s for s in states if s != "pending"]) == run.sources_total
    assert run.batches_done == run.batches_total == len(counted.saves)
