"""An append costs few round trips (issue 16: on PostgreSQL each statement is one): the
excerpt reads the conversation and where each kind of content continues in one statement,
and the write reads the stored header with its project in one, not three."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Engine, event

from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store._records import ExcerptRequest, PlacedBundle
from tests.search.helpers import FRIENDS, dialogue, write

T = TypeVar("T")


def _statements(action: Callable[[], T]) -> tuple[T, list[str]]:
    seen: list[str] = []

    def record(_c: Any, _cursor: Any, sql: str, *_: Any) -> None:
        if not sql.lstrip().upper().startswith(("BEGIN", "ROLLBACK", "COMMIT", "SAVEPOINT")):
            seen.append(" ".join(sql.split()))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        result = action()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    return result, seen


def _append(conversation_id: str, number: int, *, project: str) -> PlacedBundle:
    """The turn ``number`` of FRIENDS alone, placed after the stored ones."""
    whole = dialogue(conversation_id, FRIENDS[: number + 1], project=project)
    bundle = dataclasses.replace(whole, messages=whole.messages[number:])
    source_id = bundle.messages[0].source_id
    return PlacedBundle(prepare_bundle(bundle), {("message", source_id): number})


def test_an_excerpt_reads_where_each_kind_continues_with_the_conversation(
    store: SqlStore,
) -> None:
    write(store, dialogue("c1", FRIENDS[:5]))
    excerpts, statements = _statements(lambda: store.transcript_excerpts({"c1": ExcerptRequest()}))
    assert dict(excerpts["c1"].next_places) == {"message": 5, "tool_call": 0, "task_event": 0}
    assert [m.source_id for m in excerpts["c1"].messages] == ["c1:t4"]
    # The conversation with its next places, the latest message, the tasks, the sub-agent run.
    assert len(statements) == 4, statements
    assert not any(s.startswith("SELECT max(") for s in statements), statements


def test_an_append_reads_the_stored_header_and_project_in_one_statement(store: SqlStore) -> None:
    write(store, dialogue("c1", FRIENDS[:4], project="alpha"))
    outcomes, statements = _statements(
        lambda: store.append_conversations([_append("c1", 4, project="beta")])
    )
    assert [(o.created, o.added) for o in outcomes] == [(False, 1)]
    reads = [s for s in statements if s.startswith("SELECT") and "FROM conversations" in s]
    assert len(reads) == 1, statements
    assert not any("FROM projects WHERE" in s for s in statements), statements
    # The conversation stays in its project; the hint names one for a new conversation only.
    (stored,) = store.list_conversations()
    assert stored.project == "alpha"


def test_an_append_to_a_conversation_not_stored_creates_it_in_its_hinted_project(
    store: SqlStore,
) -> None:
    outcomes = store.append_conversations([_append("c2", 0, project="gamma")])
    assert [(o.created, o.added) for o in outcomes] == [(True, 1)]
    (stored,) = store.list_conversations()
    assert stored.project == "gamma"
    assert [m.text for m in store.messages("c2")] == [FRIENDS[0][1]]
