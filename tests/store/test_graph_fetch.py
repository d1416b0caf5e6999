"""The graph reads' kept statements (``_graph_rows.fetch``): compiled once per database and
key, run with each call's own bound values, their columns processed as SQLAlchemy's
``execute`` processes them (UTC times), on both backends (conftest's ``store``)."""

from __future__ import annotations

import uuid
from datetime import UTC
from typing import Any

import pytest
from sqlalchemy import Select, bindparam, select

from proctor.store import SqlStore
from proctor.store import _schema as t
from proctor.store._graph_rows import among, bound_ids, fetch
from tests.store.graph_drafts import add_conversation
from tests.store.test_graph_window import CONVERSATION, publish, timeline

_GE = t.graph_events.c


def test_a_kept_statement_reads_each_call_s_own_values_as_execute_reads_them(
    store: SqlStore,
) -> None:
    result = publish(store, timeline(add_conversation(store, CONVERSATION), 30))
    ids = sorted(event.event_id for event in store.graph(result.result_id, limit=None).events)
    key = ("test", uuid.uuid4().hex)  # a statement no other test kept
    with store._reader.connect() as c:

        def build(wanted: list[str], after: str) -> Select[Any]:
            return (
                select(_GE.event_id, _GE.occurred_at, _GE.title)
                .where(among(c, _GE.event_id, wanted, name="ids"))
                .where(_GE.event_id > bindparam("after", after))
                .order_by(_GE.event_id)
            )

        def read(wanted: list[str], after: str) -> list[tuple[Any, ...]]:
            return fetch(
                c,
                key,
                lambda: build(wanted, after),
                ids=bound_ids(c, wanted),
                after=after,
            )

        first = read(ids[:5], "")
        second = read(ids[10:20], ids[12])  # compiled by the first call: its own values still
        assert [row[0] for row in first] == ids[:5]
        assert [row[0] for row in second] == ids[13:20]
        assert second == [tuple(row) for row in c.execute(build(ids[10:20], ids[12])).all()]
        assert all(row[1].tzinfo is UTC for row in first + second)
        with pytest.raises(ValueError, match="binds no"):
            fetch(c, key, lambda: build(ids, ""), ids=bound_ids(c, ids), before="")
