"""The hook's ``sqlite3`` reader gives the trace the store gives (SQLite backend only).

Real Claude Code sessions from ``../shared`` (sub-agents, sidechains, tool errors, usage)
are imported into a real SQLite store; every stored conversation is then read both ways.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from proctor._util.paths import database_path
from proctor.gate import stored_trace
from proctor.gate._stored import read_stored_trace, sqlite_database
from proctor.ingest import ingest
from proctor.store import open_store
from tests.backends import ON_POSTGRES
from tests.conftest import TRANSCRIPTS_DIR

pytestmark = [
    pytest.mark.shared,
    pytest.mark.skipif(ON_POSTGRES, reason="the sqlite3 reader serves the SQLite backend only"),
]

SESSIONS = ["claude-code/claude-code-log/real_projects", "claude-code/claude-code-transcripts"]


def test_every_stored_conversation_reads_the_same_with_sqlite3_as_with_the_store(
    proctor_home: Path,
) -> None:
    store = open_store()
    try:
        report = ingest(store, [TRANSCRIPTS_DIR / folder for folder in SESSIONS])
        assert not report.errors
        ids = [
            s.conversation.conversation_id
            for s in store.list_conversations(include_children=True, limit=1000)
        ]
        assert len(ids) >= 5
        database = sqlite_database()
        assert database == database_path()
        for conversation_id in ids:
            expected = stored_trace(store.transcript(conversation_id))
            got = read_stored_trace(database, conversation_id)
            assert got is not None
            assert got.context == expected.context
            assert got.events == expected.events, conversation_id
    finally:
        store.close()


def test_a_conversation_not_stored_is_none_and_a_file_that_is_no_store_raises(
    proctor_home: Path, tmp_path: Path
) -> None:
    open_store().close()  # an empty, migrated store
    assert read_stored_trace(database_path(), "cc:session:nowhere") is None
    other = tmp_path / "not-a-store.db"
    other.write_bytes(b"these bytes are not a database" * 100)
    with pytest.raises(sqlite3.Error):
        read_stored_trace(other, "cc:session:nowhere")


def test_a_database_url_means_the_store_reads_it(
    proctor_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_store().close()
    assert sqlite_database() is not None
    monkeypatch.setenv("PROCTOR_DATABASE_URL", "postgresql://somewhere/proctor")
    assert sqlite_database() is None
