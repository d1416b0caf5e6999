"""Reading in worker processes stores exactly what reading in this process stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from proctor.ingest import ingest
from proctor.store import open_store
from tests.backends import raw_connection

QUERIES = {
    "sources": "SELECT source_type, source_id, conversation_id, fingerprint, revision, redactions "
    "FROM sources ORDER BY 1, 2",
    "messages": "SELECT source_id, seq, role, kind, text, on_active_branch FROM messages ORDER BY 1",
    "tool_calls": "SELECT source_id, name, status, exit_code, result_text FROM tool_calls ORDER BY 1",
    "conversations": "SELECT c.conversation_id, c.parent_conversation_id, c.title, c.attributes, "
    "p.name FROM conversations c JOIN projects p USING (project_id) ORDER BY 1",
}


def _content(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with raw_connection(db) as connection:
        return {
            table: [tuple(row) for row in connection.execute(text(query))]
            for table, query in QUERIES.items()
        }


@pytest.mark.slow
def test_worker_processes_store_the_same_as_one_process(
    tmp_path: Path, transcripts_dir: Path
) -> None:
    folder = transcripts_dir / "claude-code"
    reports = []
    for jobs in (1, 2):
        db = tmp_path / f"jobs-{jobs}.db"
        store = open_store(db)
        reports.append(ingest(store, [folder], jobs=jobs))
        store.close()
    sequential, parallel = reports
    assert parallel.conversations == sequential.conversations > 30
    assert [str(i) for i in parallel.issues] == [str(i) for i in sequential.issues]
    assert parallel.conversation_ids == sequential.conversation_ids
    assert _content(tmp_path / "jobs-1.db") == _content(tmp_path / "jobs-2.db")
