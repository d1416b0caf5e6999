"""What the story graph's timeline needs of findings (UI-3): the conversations a view's
events come from, and when cited sources happened (a finding sits at its evidence time)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.engine import Connection

from proctor.store import _schema as t
from proctor.store._graph_sources import excerpts

_RO = t.result_objects.c
_GE = t.graph_events.c


def event_conversations(c: Connection, result_ids: Sequence[str]) -> list[str]:
    """The conversations the events the results published come from (sorted)."""
    published = select(_RO.object_id).where(
        _RO.result_id.in_(list(result_ids)), _RO.object_type == "event"
    )
    rows = c.execute(
        select(_GE.conversation_id)
        .where(_GE.event_id.in_(published), _GE.conversation_id.is_not(None))
        .distinct()
    ).scalars()
    return sorted(str(row) for row in rows)


def source_times(c: Connection, refs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], datetime]:
    """When each source happened, where it still exists and has a time."""
    return {
        key: found.occurred_at
        for key, found in excerpts(c, set(refs)).items()
        if found.exists and found.occurred_at is not None
    }
