"""Reviews publish the same graph as before their writes were batched (issue 18).

``data/published_graph_before.json.gz`` holds every row two structural reviews wrote
(the examples in batches of 20, then a Claude Code and the Codex sessions that arrived
later), recorded with the code before manifest updates were set-based and merged facts
gathered their sources once, and recorded again (from a clean tree at the commit that
added them) when issue 20's episodes added their events, story lines and links — every
earlier row unchanged (but for the results' summaries, whose "task statuss" now reads
"task statuses"). The same reviews today must write the same rows, on SQLite and on
PostgreSQL.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from proctor.store import open_store
from tests.review.published_graph import EXAMPLES, LATER, TABLES, published_graph

BEFORE = Path(__file__).parent / "data" / "published_graph_before.json.gz"

pytestmark = pytest.mark.slow  # two reviews over 1,100 sources, about 6 s


@pytest.fixture(scope="module")
def now(tmp_path_factory: pytest.TempPathFactory, transcripts_dir: Path) -> dict[str, Any]:
    store = open_store(tmp_path_factory.mktemp("published") / "proctor.db")
    try:
        return published_graph(store, [EXAMPLES], [transcripts_dir / name for name in LATER])
    finally:
        store.close()


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(BEFORE.read_bytes()))
    return data


def test_the_recorded_reviews_read_their_sources_in_several_batches(
    before: dict[str, Any],
) -> None:
    first, second = sorted(before["review_runs"], key=lambda run: run["sources_total"])
    assert first["batches_total"] > 1 and second["batches_total"] > 1
    assert before["graph_events"] and before["entities"] and before["story_lines"]


@pytest.mark.parametrize("table", TABLES)
def test_a_review_writes_the_same_rows_as_before_the_batching(
    table: str, now: dict[str, Any], before: dict[str, Any]
) -> None:
    assert now[table] == before[table]
