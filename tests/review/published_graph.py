"""A published review as plain data, for comparing how a graph was built before and after.

``published_graph`` runs two structural reviews (a first one in small batches, then one
after more sessions arrive) with run and result ids drawn from a counter instead of
``uuid4``, and returns every row the reviews wrote to the graph, the checkpoints and the
run records, without the wall-clock columns. Two implementations that publish the same
graph give equal data. ``python -m tests.review.published_graph OUT.json.gz`` writes it (the
stored copy in ``data/`` was written by the code before issue 18's batching, and written
again when issue 20 added episodes: only episode rows were added).
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import select

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
LATER = ("claude-code/marot-spotter/tool_heavy.jsonl", "codex")
"""Sessions (under ``../shared/transcripts``) that arrive after the first review: the
second review reads only them."""

TABLES = (
    "review_runs",
    "review_batches",
    "review_manifest",
    "review_checkpoints",
    "results",
    "entities",
    "graph_events",
    "event_entities",
    "relations",
    "entity_changes",
    "open_items",
    "story_lines",
    "story_line_events",
    "experiences",
    "source_refs",
    "result_objects",
    "needs_review",
)
CLOCK_COLUMNS = frozenset(
    {"created_at", "updated_at", "completed_at", "finished_at", "acquired_at", "heartbeat_at"}
)


@contextmanager
def counted_uuids() -> Iterator[None]:
    """``uuid.uuid4`` returns 00000000-…-000000000001, …-2, … while inside."""
    counter = itertools.count(1)
    real = uuid.uuid4
    uuid.uuid4 = lambda: uuid.UUID(int=next(counter))  # type: ignore[assignment]
    try:
        yield
    finally:
        uuid.uuid4 = real  # type: ignore[assignment]


def published_graph(store: Any, first: Sequence[Path], later: Sequence[Path]) -> dict[str, Any]:
    """Review ``first`` in batches of 20, add ``later``, review again; every row written."""
    from proctor.ingest import ingest
    from proctor.review import ReviewRequest, start_review
    from proctor.store import _schema as t

    with counted_uuids():
        ingest(store, list(first))
        start_review(store, ReviewRequest(batch_size=20), semantic=None, semantic_note="none")
        ingest(store, list(later))
        start_review(store, ReviewRequest(batch_size=20), semantic=None, semantic_note="none")
    tables: dict[str, list[Any]] = {}
    with store._read() as conn:
        for name in TABLES:
            table = t.metadata.tables[name]
            columns = [c for c in table.columns if c.name not in CLOCK_COLUMNS]
            key = [c.name for c in table.primary_key.columns] or [c.name for c in columns]
            rows = [_plain(dict(row._mapping)) for row in conn.execute(select(*columns))]
            # Sorted here, not by the database: PostgreSQL's collation orders text its own way.
            tables[name] = sorted(rows, key=lambda row: [str(row[k]) for k in key])
    return tables


def _plain(value: Any) -> Any:
    """JSON-ready and clock-free: snapshots carry times of their own."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in CLOCK_COLUMNS}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def main() -> None:
    import tempfile

    from proctor.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "proctor.db")
        shared = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
        later = [shared / "transcripts" / name for name in LATER]
        data = published_graph(store, [EXAMPLES], later)
        store.close()
    text = json.dumps(data, indent=0, sort_keys=True) + "\n"
    Path(sys.argv[1]).write_bytes(gzip.compress(text.encode(), mtime=0))


if __name__ == "__main__":
    main()
