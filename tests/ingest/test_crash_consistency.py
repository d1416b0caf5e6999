"""STO-3 / ING-9: a process killed with SIGKILL mid-import leaves every conversation whole."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, text

from proctor.ingest import ingest
from proctor.store import open_store
from tests.backends import (
    ON_POSTGRES,
    SQLITE_TEMPLATE,
    database_env,
    open_real_store,
    raw_connection,
)
from tests.ingest.copies import ingest_command, session_copies
from tests.ingest.polling import ConversationCounter

COPIES = 300


def _corpus(transcripts_dir: Path, target: Path) -> Path:
    return session_copies(transcripts_dir, target, COPIES)


def _fingerprints(db: Path) -> dict[str, list[tuple[str, str, str]]]:
    with raw_connection(db) as connection:
        return _fingerprints_in(connection)


def _fingerprints_in(connection: Connection) -> dict[str, list[tuple[str, str, str]]]:
    rows = connection.execute(
        text(
            "SELECT conversation_id, source_type, source_id, fingerprint "
            "FROM sources ORDER BY 1, 2, 3"
        )
    ).all()
    by_conversation: dict[str, list[tuple[str, str, str]]] = {}
    for conversation_id, source_type, source_id, fingerprint in rows:
        by_conversation.setdefault(conversation_id, []).append(
            (source_type, source_id, fingerprint)
        )
    return by_conversation


def _reference(corpus: Path, file: Path) -> dict[str, list[tuple[str, str, str]]]:
    """What importing the whole corpus stores, from an import into a SQLite file whichever
    the backend: what the test checks is the store it kills an import of, and the sources'
    ids and fingerprints are the same on both (the killed store, imported again, is
    compared with it whole). On PostgreSQL the reference went to a database of its own:
    about 6 CPU s (the test's process and the server), against 2.4 into a SQLite file."""
    SQLITE_TEMPLATE.copy_to(file)  # migrated once per run, as the other SQLite stores are
    store = open_real_store(file)  # a SQLite file on PostgreSQL's pass as well
    try:
        ingest(store, [corpus])
    finally:
        store.close()
    engine = create_engine(f"sqlite:///file:{file.resolve()}?mode=ro&uri=true")
    try:
        with engine.connect() as connection:
            return _fingerprints_in(connection)
    finally:
        engine.dispose()


@pytest.mark.slow
def test_a_killed_import_leaves_each_conversation_fully_old_or_fully_new(
    tmp_path: Path, transcripts_dir: Path
) -> None:
    (tmp_path / "corpus").mkdir()
    corpus = _corpus(transcripts_dir, tmp_path / "corpus")

    reference = _reference(corpus, tmp_path / "reference.db")
    assert len(reference) == COPIES

    home = tmp_path / "home"
    db = home / "proctor.db"
    env = {**os.environ, "PROCTOR_HOME": str(home), **database_env(home)}
    process = subprocess.Popen(
        ingest_command(str(corpus), "--json"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    with ExitStack() as stack:  # the reader is closed before the kill
        counted = ConversationCounter(db, stack)
        while counted() < 20 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # polling another process's progress; there is no event to wait on
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL

    with raw_connection(db) as connection:
        if not ON_POSTGRES:  # PostgreSQL has no file to check: its own WAL recovery applies
            assert connection.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"
        message_counts = {
            row.conversation_id: row.messages
            for row in connection.execute(
                text("SELECT conversation_id, count(*) AS messages FROM messages GROUP BY 1")
            )
        }
        headers = set(
            connection.execute(text("SELECT conversation_id FROM conversations")).scalars()
        )
    stored = _fingerprints(db)
    assert 0 < len(stored) < COPIES, "the import was interrupted part-way"
    assert headers == set(stored), "no conversation header without its sources"
    for conversation_id, sources in stored.items():
        assert sources == reference[conversation_id], f"{conversation_id} is half-written"
        expected_messages = sum(1 for s in reference[conversation_id] if s[0] == "message")
        assert message_counts.get(conversation_id, 0) == expected_messages

    store = open_store(db)
    report = ingest(store, [corpus])
    store.close()
    assert report.errors == []
    assert [r.status for r in report.interrupted] == ["interrupted"], "the killed import's row"
    assert _fingerprints(db) == reference
