"""The state of one publish while it runs: what it wrote, and rows gathered for the end.

Shared by the writers in ``_graph_publish_facts`` and ``_graph_publish_threads``; see
``_graph_publish`` for what a publish guarantees.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection, RowMapping

from proctor.errors import NotFoundError
from proctor.graph import Proposal, ResultDraft, SourceRef, unseen_proposals
from proctor.store import _schema as t
from proctor.store._bulk import insert_rows
from proctor.store._graph_result import Written
from proctor.store._graph_rows import NEEDS_REVIEW_REASON, chunks, existing_ids

_UTC = t.UTCDateTime()

COUNTS = (
    "entities",
    "entities_new",
    "events",
    "relations",
    "changes",
    "open_items",
    "resolved_open_items",
    "story_lines",
    "experiences",
    "needs_review",
    "revoked_relations_skipped",
    "checkpoints",
)


@dataclass
class PublishState:
    """One publish: what it wrote so far and the rows it will add at the end."""

    c: Connection
    draft: ResultDraft
    now: datetime
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    objects: dict[tuple[str, str], None] = field(default_factory=dict)
    refs: dict[tuple[str, str, SourceRef], None] = field(default_factory=dict)
    reviews: list[Proposal] = field(default_factory=list)
    """Differences proposed for objects a person owns, in the order the draft raised them."""
    entity_projects: dict[str, str | None] = field(default_factory=dict)
    """Project of every entity the publish touched (the draft's, or the stored row's)."""
    event_projects: dict[str, str | None] = field(default_factory=dict)
    inserted: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """The events, entities and relations this publish inserted (object type → id → row,
    its times as a read returns them): the snapshot takes them instead of reading them
    back (``_graph_result.Written``)."""
    inserted_links: dict[str, list[str]] = field(default_factory=dict)
    """The entity links of the inserted events (all they have), each event's sorted."""

    @property
    def result_id(self) -> str:
        """The result being published."""
        return self.draft.result_id

    def publishes(
        self, object_type: str, object_id: str, sources: Sequence[SourceRef] = ()
    ) -> None:
        self.objects[(object_type, object_id)] = None
        for ref in sources:
            self.refs[(object_type, object_id, ref)] = None

    def rows(self, table: Any, column: Any, ids: Iterable[str]) -> dict[str, RowMapping]:
        wanted = sorted(set(ids))
        found: dict[str, RowMapping] = {}
        # One statement whose id list is bound at execution: no clause built per id.
        query = select(table).where(column.in_(bindparam("ids", expanding=True)))
        for part in chunks(wanted):
            for row in self.c.execute(query, {"ids": list(part)}).mappings():
                found[row[column.name]] = row
        return found

    def as_read(self, value: datetime | None) -> datetime | None:
        """``value`` as the database gives it back: written and read as a ``UTCDateTime``
        on this connection's dialect (UTC, aware). A time in UTC already comes back equal."""
        if value is None or value.tzinfo is UTC:
            return value
        dialect = self.c.dialect
        return _UTC.process_result_value(_UTC.process_bind_param(value, dialect), dialect)

    def written(self) -> Written:
        """What the snapshot's read-back takes from this publish instead of the database.

        On PostgreSQL the inserted events' links are read again: it orders text by the
        database's collation, which may differ from the code point order here."""
        others: dict[str, list[str]] = {"event": [], "entity": [], "relation": []}
        for object_type, object_id in self.objects:
            if object_type in others and object_id not in self.inserted.get(object_type, {}):
                others[object_type].append(object_id)
        links = self.inserted_links if self.c.dialect.name == "sqlite" else None
        return Written(self.inserted, others, links)

    def needs_review(self, proposal: Proposal) -> None:
        self.reviews.append(proposal)

    def require(self, what: str, known: set[str], column: Any, ids: Iterable[str]) -> None:
        """Fail (rolling everything back) when a fact points at an id nobody holds."""
        missing = set(ids) - known
        if missing:
            missing -= existing_ids(self.c, column, missing)
        if missing:
            raise NotFoundError(
                f"the draft of result {self.result_id} refers to {what} that do not exist: "
                f"{', '.join(sorted(missing)[:5])}; nothing was published"
            )

    def entity_project(self, entity_id: str) -> str | None:
        """The project of an entity of the draft or of the graph (a relation takes its from's)."""
        if entity_id not in self.entity_projects:
            row = self.c.execute(
                select(t.entities.c.project_id).where(t.entities.c.entity_id == entity_id)
            ).first()
            self.entity_projects[entity_id] = None if row is None else row[0]
        return self.entity_projects[entity_id]

    def project_of(self, event_ids: Sequence[str]) -> str | None:
        """The project of the first of these events with one, else the draft's."""
        for event_id in event_ids:
            project = self.event_projects.get(event_id)
            if project is not None:
                return project
        return self.draft.project_id

    def flush(self) -> None:
        """Write what was gathered: source references, result objects, needs-review rows."""
        rid = self.result_id
        if self.refs:
            insert_rows(
                self.c,
                t.source_refs,
                [
                    {
                        "object_type": object_type,
                        "object_id": object_id,
                        "source_type": ref.source_type,
                        "source_id": ref.source_id,
                        "field": ref.field,
                        "start_offset": ref.start,
                        "end_offset": ref.end,
                        "result_id": rid,
                    }
                    for object_type, object_id, ref in self.refs
                ],
            )
        if self.objects:
            insert_rows(
                self.c,
                t.result_objects,
                [
                    {"result_id": rid, "object_type": object_type, "object_id": object_id}
                    for object_type, object_id in self.objects
                ],
            )
        fresh = self._unseen_reviews()
        if fresh:
            insert_rows(
                self.c,
                t.needs_review,
                [
                    {
                        "object_type": proposal.object_type,
                        "object_id": proposal.object_id,
                        "result_id": self.result_id,
                        "reason": NEEDS_REVIEW_REASON,
                        "proposed": proposal.proposed,
                        "status": "open",
                        "created_at": self.now,
                    }
                    for proposal in fresh
                ],
            )
        self.counts["needs_review"] = len(fresh)

    def _unseen_reviews(self) -> list[Proposal]:
        """Proposals not raised before (open or dismissed): the policy's
        ``unseen_proposals`` over the stored ones of the same objects."""
        if not self.reviews:
            return []
        nr = t.needs_review.c
        seen: set[tuple[str, str, str]] = set()
        ids = sorted({proposal.object_id for proposal in self.reviews})
        for part in chunks(ids):
            for object_type, object_id, proposed in self.c.execute(
                select(nr.object_type, nr.object_id, nr.proposed).where(nr.object_id.in_(part))
            ):
                seen.add(Proposal(object_type, object_id, proposed).key())
        return unseen_proposals(self.reviews, seen)
