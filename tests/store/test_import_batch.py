"""An import's batch: many conversations and unit records in one transaction, each
conversation in a savepoint (``store/_import_batch.py``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from proctor.errors import ConversationWriteError
from proctor.sources import prepare_bundle
from proctor.store import ImportedFile, SqlStore
from proctor.transcript import ConversationBundle, Message
from tests.builders import conversation_bundle
from tests.store.test_contract import table_dump


def _refused(conversation_id: str) -> ConversationBundle:
    """A bundle the database refuses: two messages share one id."""
    duplicate = Message(source_id=f"{conversation_id}:dup", role="user", kind="prompt", text="a")
    base = conversation_bundle(conversation_id, messages=2)
    return dataclasses.replace(base, messages=(*base.messages, duplicate, duplicate))


def _record(path: str, *ids: str) -> ImportedFile:
    return ImportedFile(path, "0" * 32, 10, "claude_code", 1, ids)


def test_a_refused_conversation_is_rolled_back_alone_and_the_batch_commits_the_rest(
    store: SqlStore,
) -> None:
    with store.import_batch() as batch:
        first = batch.write_conversation(prepare_bundle(conversation_bundle("test:a", messages=3)))
        with pytest.raises(ConversationWriteError, match=r"'test:b' could not be stored"):
            batch.write_conversation(prepare_bundle(_refused("test:b")))
        last = batch.write_conversation(prepare_bundle(conversation_bundle("test:c", messages=2)))
        batch.record_imported_file(_record("/x/a.jsonl", "test:a"))
        batch.record_imported_file(_record("/x/c.jsonl", "test:c"))
    assert first.created and last.created
    assert store.existing_conversation_ids(["test:a", "test:b", "test:c"]) == {"test:a", "test:c"}
    assert len(store.transcript("test:a").messages) == 3
    assert store.imported_file("/x/a.jsonl") == _record("/x/a.jsonl", "test:a")
    assert store.imported_files(["/x/a.jsonl", "/x/b.jsonl", "/x/c.jsonl"]) == {
        "/x/a.jsonl": _record("/x/a.jsonl", "test:a"),
        "/x/c.jsonl": _record("/x/c.jsonl", "test:c"),
    }


def test_a_project_created_in_a_refused_savepoint_is_created_again(store: SqlStore) -> None:
    with store.import_batch() as batch:
        with pytest.raises(ConversationWriteError):
            batch.write_conversation(prepare_bundle(_refused("test:b")), project="fresh")
        batch.write_conversation(prepare_bundle(conversation_bundle("test:a")), project="fresh")
    assert [p.name for p in store.projects()] == ["fresh"]


def test_a_batch_that_fails_leaves_the_store_as_it_was(
    store: SqlStore, backend_url: str | Path
) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle("test:old")))
    before = table_dump(backend_url)

    def fails() -> None:
        with store.import_batch() as batch:
            batch.write_conversation(prepare_bundle(conversation_bundle("test:new", messages=4)))
            batch.record_imported_file(_record("/x/new.jsonl", "test:new"))
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        fails()
    assert table_dump(backend_url) == before


def test_a_unit_recorded_again_keeps_its_newest_record(store: SqlStore) -> None:
    store.record_imported_file(_record("/x/a.jsonl", "test:old"))
    with store.import_batch() as batch:
        batch.write_conversation(prepare_bundle(conversation_bundle("test:a")))
        batch.record_imported_file(_record("/x/a.jsonl", "test:a"))
    assert store.imported_file("/x/a.jsonl") == _record("/x/a.jsonl", "test:a")
