"""The story graph's version (``GraphReads.graph_version``), on every backend: what the API
keeps finished graph and story answers by. It must change with every write that can
change such an answer (a publish, a person's edit, a conversation added, revised or
deleted) and stay put while only reads happen."""

from __future__ import annotations

import dataclasses
import uuid

from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from tests.builders import conversation_bundle
from tests.store.graph_drafts import add_conversation, add_run, sample_draft


def _version(store: SqlStore) -> str:
    return store.repos.graph.graph_version()


def _publish(store: SqlStore, project_id: str, summary: str = "first") -> str:
    run_id = str(uuid.uuid4())
    add_run(store, run_id, project_id)
    draft = dataclasses.replace(sample_draft(run_id, project_id), summary=summary)
    store.publish_result(draft, "completed")
    return draft.result_id


def test_the_version_stays_while_only_reads_happen_and_a_reader_sees_the_writers(
    store: SqlStore,
) -> None:
    project_id = add_conversation(store)
    result_id = _publish(store, project_id)
    before = _version(store)
    store.graph(result_id, limit=5)
    store.stories(store.result(result_id).scope_key)
    assert _version(store) == before
    assert store.reader().repos.graph.graph_version() == before


def test_a_publish_changes_the_version(store: SqlStore) -> None:
    project_id = add_conversation(store)
    _publish(store, project_id)
    before = _version(store)
    _publish(store, project_id, summary="second")
    assert _version(store) != before


def test_every_edit_changes_the_version_even_one_that_leaves_the_state_as_it_was(
    store: SqlStore,
) -> None:
    project_id = add_conversation(store)
    result_id = _publish(store, project_id)
    entity_id = store.graph(result_id).entities[0].entity_id
    seen = {_version(store)}
    store.confirm("entity", entity_id)
    seen.add(_version(store))
    store.confirm("entity", entity_id)  # the same state again: still a new edit
    seen.add(_version(store))
    assert len(seen) == 3


def test_conversations_added_revised_or_deleted_change_the_version(store: SqlStore) -> None:
    project_id = add_conversation(store)
    _publish(store, project_id)
    seen = {_version(store)}
    add_conversation(store, "test:conv-2")
    seen.add(_version(store))
    # The quoted messages of the first conversation, revised (a re-import of a grown file).
    store.write_conversation(
        prepare_bundle(conversation_bundle("test:conv-1", text_prefix="revised"))
    )
    seen.add(_version(store))
    store.delete_conversation("test:conv-2")
    seen.add(_version(store))
    assert len(seen) == 4
