"""The store contract: every backend must pass these (SPEC STO-1, STO-3, ING-2, ING-8)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select

from proctor.errors import ConversationWriteError, NotFoundError, StoreError
from proctor.sources import prepare_bundle
from proctor.store import ConversationRepository, SqlStore
from proctor.store._schema import metadata
from proctor.transcript import Message
from tests.builders import conversation_bundle, with_message_text, with_tool_attributes
from tests.store.conftest import open_backend


def table_dump(location: str | Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every Proctor table, for before/after comparisons."""
    url = f"sqlite:///{location}" if isinstance(location, Path) else location
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table.name: [
                    tuple(row)
                    for row in connection.execute(
                        select(table).order_by(*table.primary_key.columns)
                    )
                ]
                for table in metadata.sorted_tables
            }
    finally:
        engine.dispose()


def test_a_written_conversation_reads_back_in_order(store: SqlStore) -> None:
    bundle = conversation_bundle(messages=4)
    outcome = store.write_conversation(prepare_bundle(bundle))
    assert outcome.created and outcome.added == 6  # 4 messages, 1 tool call, 1 task event
    transcript = store.transcript("test:conv-1")
    assert [m.source_id for m in transcript.messages] == [m.source_id for m in bundle.messages]
    assert (
        transcript.messages[1].usage is not None
        and transcript.messages[1].usage.output_tokens == 20
    )
    assert transcript.messages[0].created_at == bundle.messages[0].created_at
    call = transcript.tool_calls[0]
    assert (call.name, call.arguments, call.status, call.exit_code) == (
        "Bash",
        {"command": "pytest -q"},
        "error",
        1,
    )
    assert transcript.tasks[0].goal == "round half up"
    assert transcript.summary.project == "invoice-service"
    assert transcript.summary.messages == 4 and transcript.summary.tool_calls == 1


def test_rewriting_the_same_conversation_writes_nothing(
    store: SqlStore, backend_url: str | Path
) -> None:
    prepared = prepare_bundle(conversation_bundle())
    store.write_conversation(prepared)
    before = table_dump(backend_url)
    outcome = store.write_conversation(prepare_bundle(conversation_bundle()))
    assert not outcome.changed
    assert outcome.unchanged == len(prepared.sources)
    assert table_dump(backend_url) == before


def test_an_edited_message_gets_a_new_revision_and_fingerprint(store: SqlStore) -> None:
    bundle = conversation_bundle()
    store.write_conversation(prepare_bundle(bundle))
    first = store.source("message", "test:conv-1:m1")
    outcome = store.write_conversation(
        prepare_bundle(with_message_text(bundle, 1, "message 1, edited"))
    )
    assert outcome.revised == 1 and outcome.added == 0
    second = store.source("message", "test:conv-1:m1")
    assert second.revision == first.revision + 1 == 2
    assert second.fingerprint != first.fingerprint
    versions = store.source_versions("message", "test:conv-1:m1")
    assert [(v.revision, v.fingerprint) for v in versions] == [
        (1, first.fingerprint),
        (2, second.fingerprint),
    ]
    assert store.messages("test:conv-1")[1].text == "message 1, edited"


def test_tool_metadata_alone_does_not_make_a_new_revision(store: SqlStore) -> None:
    bundle = conversation_bundle()
    store.write_conversation(prepare_bundle(bundle))
    outcome = store.write_conversation(prepare_bundle(with_tool_attributes(bundle, durationMs=99)))
    assert outcome.revised == 0 and outcome.updated == 1
    assert store.source("tool_call", "test:conv-1:call-1").revision == 1
    assert store.transcript("test:conv-1").tool_calls[0].attributes == {"durationMs": 99}


def test_new_messages_appended_later_are_added_without_touching_the_rest(store: SqlStore) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle(messages=2)))
    outcome = store.write_conversation(prepare_bundle(conversation_bundle(messages=4)))
    assert (outcome.added, outcome.revised) == (2, 0)
    assert len(store.messages("test:conv-1")) == 4


def test_deleting_a_conversation_removes_its_sub_agents_and_sources(store: SqlStore) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle("test:conv-1")))
    store.write_conversation(
        prepare_bundle(conversation_bundle("test:agent-1", parent="test:conv-1"))
    )
    store.write_conversation(prepare_bundle(conversation_bundle("test:other")))
    deleted = store.delete_conversation("test:conv-1")
    assert sorted(deleted) == ["test:agent-1", "test:conv-1"]
    counts = store.counts()
    assert counts.conversations == 1 and counts.messages == 3 and counts.sources == 5
    assert counts.subagent_runs == 0 and counts.tasks == 1
    with pytest.raises(NotFoundError):
        store.source("message", "test:conv-1:m0")


def test_a_sub_agent_joins_its_parents_project_and_is_listed_only_on_request(
    store: SqlStore,
) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle("test:conv-1")), project="billing")
    store.write_conversation(
        prepare_bundle(conversation_bundle("test:agent-1", parent="test:conv-1"))
    )
    assert store.conversation("test:agent-1").project == "billing"
    assert [r.conversation_id for r in store.list_conversations()] == ["test:conv-1"]
    assert store.conversation("test:conv-1").subagents == 1
    everything = store.list_conversations(include_children=True)
    assert {r.conversation_id for r in everything} == {"test:conv-1", "test:agent-1"}
    transcript = store.transcript("test:agent-1")
    assert transcript.subagent_run is not None and transcript.subagent_run.agent_type == "Explore"
    assert [c.conversation_id for c in store.transcript("test:conv-1").children] == ["test:agent-1"]


def test_a_message_id_owned_by_another_conversation_stays_with_its_owner(store: SqlStore) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle("test:conv-1")))
    resumed = conversation_bundle("test:conv-2")
    copied = dataclasses.replace(resumed.messages[0], source_id="test:conv-1:m0")
    resumed = dataclasses.replace(resumed, messages=(copied, *resumed.messages[1:]))
    outcome = store.write_conversation(prepare_bundle(resumed))
    assert outcome.shared == ("test:conv-1:m0",)
    assert store.source("message", "test:conv-1:m0").conversation_id == "test:conv-1"


def test_a_failing_write_leaves_the_previous_state_whole(
    store: SqlStore, backend_url: str | Path
) -> None:
    bundle = conversation_bundle(messages=2)
    store.write_conversation(prepare_bundle(bundle))
    before = table_dump(backend_url)
    # Two messages with one id: the content insert fails after sources were inserted.
    duplicate = Message(source_id="test:conv-1:new", role="user", kind="prompt", text="a")
    broken = dataclasses.replace(
        conversation_bundle(messages=4, text_prefix="changed"),
        messages=(
            *conversation_bundle(messages=4, text_prefix="changed").messages,
            duplicate,
            duplicate,
        ),
    )
    with pytest.raises(ConversationWriteError, match="test:conv-1"):
        store.write_conversation(prepare_bundle(broken))
    assert table_dump(backend_url) == before


def test_several_conversations_are_written_together_or_not_at_all(
    store: SqlStore, backend_url: str | Path
) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle(messages=2)))
    before = table_dump(backend_url)
    fine = conversation_bundle("test:conv-2", messages=3)
    duplicate = Message(source_id="test:conv-3:dup", role="user", kind="prompt", text="a")
    base = conversation_bundle("test:conv-3", messages=2)
    broken = dataclasses.replace(base, messages=(*base.messages, duplicate, duplicate))
    with pytest.raises(ConversationWriteError, match=r"test:conv-3.*nothing of this request"):
        store.write_conversations([prepare_bundle(fine), prepare_bundle(broken)])
    assert table_dump(backend_url) == before
    outcomes = store.write_conversations([prepare_bundle(fine)])
    assert [o.conversation_id for o in outcomes] == ["test:conv-2"] and outcomes[0].created


def test_a_read_only_store_refuses_to_write(store: SqlStore, backend_url: str | Path) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle()))
    reader = open_backend(backend_url, read_only=True)
    try:
        assert reader.counts().conversations == 1
        # The read-only store has no write methods at all; a writing repository put over
        # its database finds no writer (and the database itself refuses: see
        # test_read_only_repositories.py).
        assert not hasattr(reader, "write_conversation")
        writing = ConversationRepository(reader.repos.conversations._database)
        with pytest.raises(StoreError):
            writing.write_conversation(prepare_bundle(conversation_bundle("test:conv-2")))
        assert reader.counts().conversations == 1
    finally:
        reader.close()


def test_conversations_resolve_by_id_external_id_or_unique_prefix(store: SqlStore) -> None:
    store.write_conversation(prepare_bundle(conversation_bundle("test:abc-123")))
    store.write_conversation(prepare_bundle(conversation_bundle("test:abd-456")))
    assert store.resolve_conversation_id("test:abc-123") == "test:abc-123"
    assert store.resolve_conversation_id("abc-123") == "test:abc-123"
    assert store.resolve_conversation_id("test:abd") == "test:abd-456"
    with pytest.raises(NotFoundError, match="several"):
        store.resolve_conversation_id("test:ab")
    with pytest.raises(NotFoundError, match="no conversation"):
        store.resolve_conversation_id("nothing-like-this")


def test_listing_pages_newest_first(store: SqlStore) -> None:
    from datetime import timedelta

    for i in range(5):
        bundle = conversation_bundle(f"test:c{i}")
        conversation = dataclasses.replace(
            bundle.conversation, started_at=bundle.conversation.started_at + timedelta(days=i)
        )
        store.write_conversation(
            prepare_bundle(dataclasses.replace(bundle, conversation=conversation))
        )
    page = store.list_conversations(limit=2, offset=1)
    assert [r.conversation_id for r in page] == ["test:c3", "test:c2"]
    assert store.count_conversations() == 5
