"""ING-7: ``watch`` imports lines appended to a live session file as they arrive."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

from proctor.ingest import IngestReport, Watcher
from proctor.store import open_store
from tests.ingest import planted


def test_appended_lines_are_imported_while_the_watcher_runs(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    session = planted.write_claude_code(folder)
    lines = session.read_text().splitlines()
    session.write_text("\n".join(lines[:1]) + "\n")  # the session has just started

    store = open_store(tmp_path / "proctor.db")
    reports: queue.Queue[IngestReport] = queue.Queue()
    stop = threading.Event()
    watcher = Watcher(store, [folder], debounce_ms=50)
    thread = threading.Thread(target=watcher.run, args=(reports.put, stop), daemon=True)
    thread.start()
    try:
        first = reports.get(timeout=30)
        assert first.conversations == 1
        conversation_id = first.conversation_ids[0]
        assert [m.role for m in store.messages(conversation_id)] == ["user"]

        # The agent writes the rest, the last line torn half-way at first.
        with session.open("a") as handle:
            handle.write("\n".join(lines[1:-1]) + "\n" + lines[-1][:40])
        grown = reports.get(timeout=30)
        assert grown.sources_added >= 1
        assert grown.issues == []  # a torn tail in a live file is not worth a warning
        with session.open("a") as handle:
            handle.write(lines[-1][40:] + "\n")
        finished = reports.get(timeout=30)
        assert finished.sources_added >= 1
        texts = [m.text for m in store.messages(conversation_id)]
        assert texts[-1].startswith("Found GITHUB_TOKEN=[REDACTED:")
        assert store.counts().conversations == 1
    finally:
        stop.set()
        thread.join(timeout=10)
        store.close()


def test_a_file_that_is_not_a_transcript_is_ignored_quietly(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    store = open_store(tmp_path / "proctor.db")
    watcher = Watcher(store, [folder])
    (folder / "notes.txt").write_text("remember the milk\n")
    (folder / "todo.json").write_text(json.dumps({"todo": []}))
    assert watcher.import_changes([folder / "notes.txt", folder / "todo.json"]) is None
    store.close()
