"""Open items: a test or command whose last run failed, and those a later run fixed.

Each ``test_run`` and ``command`` event reports on its first entity (the test, or the
command line). Following those in time order, an entity whose last finished run failed
is open — ``failing:<entity id>``, citing that failure — and one whose last run passed
is resolved, so an item opened by an earlier review is closed when this one publishes.
Only the same entity can resolve an item: a different command succeeding says nothing
about the one that failed, and runs without a recorded result change nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from proctor.graph import EventFact, OpenItemFact
from proctor.review.structural._titles import failed_label

_RUN_KINDS = frozenset({"test_run", "command"})
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def open_item_key(entity_id: str) -> str:
    """The key of the open item about a failing test or command."""
    return f"failing:{entity_id}"


def derive_open_items(events: Sequence[EventFact]) -> tuple[list[OpenItemFact], list[str]]:
    """Open items for tests and commands still failing, and keys of those now passing.

    Args:
        events: Events in time order, possibly from several batches; when every event has
            a time they are re-sorted by it (stably), so a caller's order only breaks ties.

    Returns:
        The open items, and the keys (``failing:<entity id>``) of entities whose last run
        passed, in the order their last runs happened.
    """
    ordered = list(events)
    if all(e.occurred_at is not None for e in ordered):
        ordered.sort(key=lambda e: e.occurred_at or _EARLIEST)
    last: dict[str, EventFact] = {}
    for event in ordered:
        if event.kind in _RUN_KINDS and event.entity_ids and event.outcome != "unknown":
            subject = event.entity_ids[0]
            last.pop(subject, None)  # keep dict order = order of last runs
            last[subject] = event
    items: list[OpenItemFact] = []
    resolved: list[str] = []
    for subject, event in last.items():
        if event.outcome == "ok":
            resolved.append(open_item_key(subject))
            continue
        label = failed_label(event.title) or event.title
        when = f" at {event.occurred_at.isoformat()}" if event.occurred_at else ""
        items.append(
            OpenItemFact(
                key=open_item_key(subject),
                project_id=event.project_id,
                title=f"{label} still failing",
                detail=f"Last run{when} failed: {event.summary} No later run passed.",
                sources=event.sources,
                layer="structural",
                entity_ids=(subject,),
            )
        )
    return items, resolved
