"""A review's reads and manifest moves cost the same per batch whatever its size (issue 18).

Reading a batch used to bind the list of its sources' ids into every statement (SQL
text rendered anew for each list length, each id looked up one by one); saving it found
each manifest entry by walking the batch's range (quadratic in the batch's size); the
publish's read-back of story-line events probed the primary key once per (line, event)
pair. Here every statement the store sends is recorded: the reads of a batch are the same
statements for 5 sources and for 150, each entry is moved by its primary key, and the
story-line events are read by line alone — with the published graph unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore, open_store
from tests.conftest import EXAMPLES_DIR


class Recorded:
    """Statements sent while the store read or saved a batch, one list per call."""

    def __init__(self) -> None:
        self.current: list[str] | None = None
        self.reads: list[list[str]] = []
        self.saves: list[list[str]] = []
        self.all: list[str] = []

    def record(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        text = " ".join(statement.split()).lower()
        self.all.append(text)
        if self.current is not None:
            self.current.append(text)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Recorded:
    seen = Recorded()
    read, save = SqlStore.review_batch_input, SqlStore.save_review_batch

    def recording(method: Any, into: list[list[str]]) -> Any:
        def wrapped(self: SqlStore, *args: Any, **kwargs: Any) -> Any:
            seen.current = []
            try:
                return method(self, *args, **kwargs)
            finally:
                into.append(seen.current)
                seen.current = None

        return wrapped

    monkeypatch.setattr(SqlStore, "review_batch_input", recording(read, seen.reads))
    monkeypatch.setattr(SqlStore, "save_review_batch", recording(save, seen.saves))
    return seen


def _review(tmp_path: Path, name: str, seen: Recorded, batch_size: int, *more: Path) -> SqlStore:
    store = open_store(tmp_path / f"{name}.db")
    ingest(store, [EXAMPLES_DIR, *more])
    event.listen(store._reader, "before_cursor_execute", seen.record)
    event.listen(store._writer, "before_cursor_execute", seen.record)
    run = start_review(
        store, ReviewRequest(batch_size=batch_size), semantic=None, semantic_note="none"
    )
    assert run.status == "completed"
    return store


def test_a_batch_is_read_with_the_same_statements_whatever_its_size(
    tmp_path: Path, recorded: Recorded, transcripts_dir: Path
) -> None:
    tool_heavy = transcripts_dir / "claude-code" / "marot-spotter" / "tool_heavy.jsonl"
    sizes: list[int] = []
    reads: list[set[str]] = []
    for name, batch_size, more in (("small", 5, ()), ("large", 150, (tool_heavy,))):
        store = _review(tmp_path, name, recorded, batch_size, *more)
        (run,) = store.review_runs(limit=1)
        sizes += [batch.sources for batch in store.review_batches(run.run_id)]
        reads.append({statement for read in recorded.reads for statement in read})
        recorded.reads.clear()
    assert min(sizes) <= 5 and max(sizes) >= 50, "batches of very different sizes were read"
    small, large = reads
    assert small == large, "a batch's reads are rendered anew for its number of sources"
    assert not [s for s in large if "from messages" in s and " in (" in s]


def test_saving_a_batch_moves_each_manifest_entry_by_its_primary_key(
    tmp_path: Path, recorded: Recorded
) -> None:
    store = _review(tmp_path, "keyed", recorded, 20)
    moves = [s for save in recorded.saves for s in save if s.startswith("update review_manifest")]
    assert moves, "no manifest entry was moved"
    for statement in moves:
        where = statement.split(" where ", 1)[1]
        assert "review_manifest.position" in where and "source_id" not in where, statement
    (run,) = store.review_runs(limit=1)
    assert run.sources_done == run.sources_total > 20
    assert run.batches_done == run.batches_total > 1


def test_the_publish_reads_story_line_events_by_line_alone_and_publishes_them_all(
    tmp_path: Path, recorded: Recorded
) -> None:
    store = _review(tmp_path, "lines", recorded, 20)
    reads = [s for s in recorded.all if s.startswith("select") and "from story_line_events" in s]
    assert reads, "the publish read no story-line events back"
    for statement in reads:
        assert "story_line_events.event_id in" not in statement, statement
    (run,) = store.review_runs(limit=1)
    assert run.result_id is not None
    snapshot = store.graph(run.result_id, as_published=True, limit=None)
    current = store.graph(run.result_id, limit=None)
    assert snapshot.story_lines and any(line.event_ids for line in snapshot.story_lines)
    assert [(s.story_line_id, s.event_ids) for s in snapshot.story_lines] == [
        (s.story_line_id, s.event_ids) for s in current.story_lines
    ]
    in_lines = {e for line in snapshot.story_lines for e in line.event_ids}
    assert in_lines <= {e.event_id for e in snapshot.events}
