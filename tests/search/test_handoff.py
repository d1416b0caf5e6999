"""The index is always there: imports hand embedding to a detached indexer, searches never wait.

``proctor ingest`` and ``proctor search`` start ``python -m proctor.search`` when the index is
behind and no indexer holds the store's lock; a search right after a large import answers
from full text at once and says the rest is being embedded. The detached indexer, killed
half-way, leaves whole chunks behind and the next one finishes the rest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from proctor.cli.main import cli
from proctor.search import BackgroundIndexer, index_full_text
from proctor.search._encoder import installed_encoder_name
from proctor.search._handoff import (
    SQLITE_VARIABLE,
    IndexerLock,
    hand_off_indexing,
    index_behind,
    indexer_running,
)
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from tests.backends import database_env
from tests.search.conftest import needs_embeddings
from tests.search.helpers import dialogue, write

pytestmark = needs_embeddings

TOPICS = [
    "the garden needs water before the heat wave",
    "we booked a train to the mountains for the weekend",
    "my sister adopted a puppy from the shelter",
    "the failing test was a timezone bug in the parser",
    "I painted the kitchen a pale shade of green",
    "the concert was cancelled because of the storm",
]


def _embedded(store: SqlStore) -> dict[int, bytes]:
    v = t.search_vectors
    model = installed_encoder_name()
    with store._read() as connection:
        return {
            row.row_id: bytes(row.vector)
            for row in connection.execute(select(v.c.row_id, v.c.vector).where(v.c.model == model))
        }


def _documents(store: SqlStore) -> int:
    with store._read() as connection:
        return int(
            connection.execute(select(func.count()).select_from(t.search_documents)).scalar_one()
        )


class _Ended:
    """What the stand-in "starts": a process that has already ended."""

    def poll(self) -> int:
        return 0


class _Started:
    """Stands in for ``subprocess.Popen`` in the hand-off: records what would be started."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []

    def __call__(self, command: list[str], **options: Any) -> object:
        self.calls.append((command, options["env"]))
        assert options["start_new_session"] is True
        return _Ended()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> _Started:
    recorder = _Started()
    monkeypatch.setenv("PROCTOR_BACKGROUND_INDEXING", "1")
    monkeypatch.setattr("proctor.search._handoff.subprocess.Popen", recorder)
    return recorder


def _run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.shared
@pytest.mark.slow  # imports every shared transcript (worker processes): ~12 CPU s
def test_search_right_after_importing_every_shared_transcript_answers_without_embedding(
    transcripts_dir: Path, started: _Started
) -> None:
    imported = CliRunner().invoke(cli, ["ingest", str(transcripts_dir)], catch_exceptions=False)
    assert "conversation(s) written" in imported.output  # some shared files are broken on purpose
    # The import handed the index to a detached indexer instead of building it.
    assert [call[0][1:] for call in started.calls] == [["-m", "proctor.search"]]
    result = _run("search", "failing test", "--json")
    data = json.loads(result.output[result.output.index("{") :])
    assert data["mode"] == "hybrid"
    assert any(hit["type"] == "message" for hit in data["hits"])
    index = data["index"]
    # Full text was brought up to date in the foreground; nothing was embedded there.
    assert index["documents"] > 1_000
    assert index["embedded"] == 0
    assert index["stale"] is True
    assert index["indexing"] is True
    assert "the background indexer is adding them" in index["note"]
    assert len(started.calls) == 2  # the search handed off too: nobody holds the lock


@pytest.mark.slow
def test_the_hand_off_names_the_store_and_starts_nothing_when_the_index_is_current(
    sqlite_store: SqlStore, started: _Started
) -> None:
    write(sqlite_store, dialogue("c1", [("Ann", text) for text in TOPICS]))
    assert index_behind(sqlite_store, installed_encoder_name())
    assert hand_off_indexing(sqlite_store) is not None
    ((command, env),) = started.calls
    assert command == [sys.executable, "-m", "proctor.search"]
    assert env[SQLITE_VARIABLE] == sqlite_store.description
    from proctor.search import index_sources

    index_sources(sqlite_store)
    assert not index_behind(sqlite_store, installed_encoder_name())
    assert hand_off_indexing(sqlite_store) is None
    assert len(started.calls) == 1


def test_no_indexer_is_started_while_another_holds_the_stores_lock(
    store: SqlStore, started: _Started
) -> None:
    write(store, dialogue("c1", [("Ann", text) for text in TOPICS]))
    lock = IndexerLock(store)
    assert lock.acquire()
    try:
        assert indexer_running(store)
        assert not IndexerLock(store).acquire()
        assert hand_off_indexing(store) is None
    finally:
        lock.release()
    assert not indexer_running(store)
    assert hand_off_indexing(store) is not None


@pytest.mark.slow
def test_a_server_leaves_embedding_to_the_indexer_holding_the_lock(store: SqlStore) -> None:
    write(store, dialogue("c1", [("Ann", text) for text in TOPICS]))
    lock = IndexerLock(store)
    assert lock.acquire()
    indexer = BackgroundIndexer(lambda: store).start()
    try:
        assert indexer.catch_up(30)
        assert not indexer.wait_complete(3)  # the lock's holder has the embedding to do
        assert _embedded(store) == {}
        lock.release()
        assert indexer.wait_complete(60)
        assert len(_embedded(store)) == _documents(store) == len(TOPICS)
    finally:
        lock.release()
        indexer.stop()


def _released(store: SqlStore, seconds: float = 10.0) -> bool:
    """Whether the indexer lock is free within ``seconds``. On SQLite it is free once the
    killed process is gone; PostgreSQL ends a killed client's session (and its advisory
    lock) when its server process reads the closed socket, a moment later."""
    deadline = time.monotonic() + seconds
    while indexer_running(store):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # another process's state; there is no event to wait on
    return True


@pytest.mark.slow
def test_the_detached_indexer_killed_half_way_is_finished_by_the_next_one(
    tmp_path: Path,
) -> None:
    database = tmp_path / "proctor-home" / "proctor.db"
    database.parent.mkdir(parents=True, exist_ok=True)
    backend = database_env(tmp_path / "proctor-home")
    env = {
        **os.environ,
        **backend,
        "PROCTOR_HOME": str(tmp_path / "proctor-home"),
        **({} if backend else {SQLITE_VARIABLE: str(database)}),
    }
    url = backend.get("PROCTOR_DATABASE_URL")
    store = open_store(url=url) if url else open_store(database)
    try:
        for number in range(8):
            turns = [
                ("Ann", f"{TOPICS[i % len(TOPICS)]} (day {number}, note {i})") for i in range(60)
            ]
            write(store, dialogue(f"c{number}", turns))
        index_full_text(store)
        total = _documents(store)
        first = subprocess.Popen(
            [sys.executable, "-m", "proctor.search", "--progress"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert first.stdout is not None
        line = first.stdout.readline()  # the first chunk is written
        assert line.startswith("embedded "), line
        first.send_signal(signal.SIGKILL)
        first.wait()
        first.stdout.close()
        kept = _embedded(store)
        assert 0 < len(kept) < total
        assert _released(store)  # the lock went with the process
        second = subprocess.run(
            [sys.executable, "-m", "proctor.search", "--progress"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        last = second.stdout.strip().splitlines()[-1]
        assert last == f"embedded {total - len(kept)} of {total - len(kept)}"
        done = _embedded(store)
        assert len(done) == total
        assert all(done[row_id] == vector for row_id, vector in kept.items())
    finally:
        store.close()
