"""A publish does the work of writing, not of reading back what it wrote (issue 18).

Its snapshot takes the result's source references from the rows it inserted instead of
reading them back, and Python's cyclic garbage collector is paused while it writes and
back on afterwards, whether the publish succeeded or failed.
"""

from __future__ import annotations

import gc
import uuid
from typing import Any

import pytest
from sqlalchemy import event

from proctor.errors import NotFoundError
from proctor.store import SqlStore, _graph_publish
from tests.store.graph_drafts import add_conversation, add_run, sample_draft


@pytest.fixture
def project_id(store: SqlStore) -> str:
    return add_conversation(store)


def _statements(store: SqlStore) -> list[str]:
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(" ".join(statement.split()).lower())

    event.listen(store._writer, "before_cursor_execute", record)
    return sent


def test_a_publish_reads_no_source_reference_back_and_its_snapshot_has_them_all(
    store: SqlStore, project_id: str
) -> None:
    run_id = str(uuid.uuid4())
    add_run(store, run_id, project_id)
    draft = sample_draft(run_id, project_id)
    sent = _statements(store)
    store.publish_result(draft, "completed")
    assert any("insert into source_refs" in s for s in sent)
    assert not [s for s in sent if s.startswith("select") and "from source_refs" in s]
    snapshot = store.graph(draft.result_id, as_published=True, limit=None)
    current = store.graph(draft.result_id, limit=None)
    for kind in ("events", "entities", "relations", "changes", "open_items"):
        assert [x.sources for x in getattr(snapshot, kind)] == [
            x.sources for x in getattr(current, kind)
        ], kind


def test_the_collector_is_paused_while_a_publish_writes_and_on_again_after(
    store: SqlStore, project_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    write_events = _graph_publish.write_events

    def watching(*args: Any) -> None:
        seen.append(gc.isenabled())
        write_events(*args)

    monkeypatch.setattr(_graph_publish, "write_events", watching)
    run_id = str(uuid.uuid4())
    add_run(store, run_id, project_id)
    assert gc.isenabled()
    store.publish_result(sample_draft(run_id, project_id), "completed")
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_is_on_again_after_a_publish_that_failed(
    store: SqlStore, project_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*args: Any) -> None:
        raise NotFoundError("a fact points at an event nobody holds")

    monkeypatch.setattr(_graph_publish, "write_events", failing)
    run_id = str(uuid.uuid4())
    add_run(store, run_id, project_id)
    with pytest.raises(NotFoundError):
        store.publish_result(sample_draft(run_id, project_id), "completed")
    assert gc.isenabled()
