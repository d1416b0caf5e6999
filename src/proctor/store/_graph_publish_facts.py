"""Publishing entities, events, entity changes and relations (REV-3, REV-4).

What happens to an existing entity or relation is decided by ``proctor.graph``'s publish
policy (``decide_entities``, ``decide_relations``: user edits win, a differing proposal
for a protected object needs review, a revoked relation is never recreated, identity is
the id and never the name); these functions read the stored state it needs and execute
what it decided.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import RowMapping

from proctor.graph import (
    EntityFact,
    EventFact,
    StoredEntity,
    StoredRelation,
    decide_entities,
    decide_relations,
    group_by_identity,
    merged_sources,
)
from proctor.store import _schema as t
from proctor.store._bulk import insert_rows
from proctor.store._graph_publish_state import PublishState
from proctor.store._graph_rows import chunks, derived_id, relation_id


def write_entities(p: PublishState) -> None:
    """Execute the policy's decisions: insert new entities, update automatic ones, record
    the differing proposals for protected ones (``proctor.graph.decide_entities``)."""
    grouped = group_by_identity(p.draft.entities, _entity_id)
    stored = p.rows(t.entities, t.entities.c.entity_id, grouped)
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    rid, now = p.result_id, p.as_read(p.now)
    fresh = p.inserted.setdefault("entity", {})
    for decision in decide_entities(grouped, {k: _stored_entity(r) for k, r in stored.items()}):
        entity_id, fact = decision.object_id, decision.fact
        p.publishes("entity", entity_id, decision.sources)
        if decision.action == "insert":
            p.entity_projects[entity_id] = fact.project_id
            fresh[entity_id] = row = {
                "entity_id": entity_id,
                "project_id": fact.project_id,
                "kind": fact.kind,
                "name": fact.name,
                "description": fact.description,
                "identity_key": decision.identity_key,
                "layer": fact.layer,
                "state": "automatic",
                "first_result_id": rid,
                "last_result_id": rid,
                "created_at": now,
                "updated_at": now,
            }
            inserts.append(row)
            continue
        p.entity_projects[entity_id] = stored[entity_id]["project_id"]
        if decision.action == "update":
            updates.append(
                {
                    "b_id": entity_id,
                    "kind": fact.kind,
                    "name": fact.name,
                    "description": fact.description,
                    "identity_key": decision.identity_key,
                    "last_result_id": rid,
                    "updated_at": p.now,
                }
            )
        elif decision.proposal is not None:
            p.needs_review(decision.proposal)
    if inserts:
        insert_rows(p.c, t.entities, inserts)
    if updates:
        e = t.entities.c
        # ``state = automatic`` again here: a person's edit committed meanwhile wins.
        p.c.execute(
            update(t.entities)
            .where(e.entity_id == bindparam("b_id"), e.state == "automatic")
            .values(
                kind=bindparam("kind"),
                name=bindparam("name"),
                description=bindparam("description"),
                identity_key=bindparam("identity_key"),
                last_result_id=bindparam("last_result_id"),
                updated_at=bindparam("updated_at"),
            ),
            updates,
        )
    p.counts["entities"] = len(grouped)
    p.counts["entities_new"] = len(inserts)


def _entity_id(fact: EntityFact) -> str:
    return fact.entity_id


def _stored_entity(row: RowMapping) -> StoredEntity:
    return StoredEntity(
        state=row["state"],
        kind=row["kind"],
        name=row["name"],
        description=row["description"],
        identity_key=row["identity_key"],
        project_id=row["project_id"],
    )


def write_events(p: PublishState) -> None:
    """Insert or update events (they have no user state) and link them to their entities."""
    grouped: dict[str, list[EventFact]] = {}
    for fact in p.draft.events:
        grouped.setdefault(fact.event_id, []).append(fact)
    linked = {
        event_id: list(dict.fromkeys(e for fact in facts for e in fact.entity_ids))
        for event_id, facts in grouped.items()
    }
    p.require(
        "entities",
        set(p.entity_projects),
        t.entities.c.entity_id,
        (e for ids in linked.values() for e in ids),
    )
    stored = p.rows(t.graph_events, t.graph_events.c.event_id, grouped)
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    rid, now = p.result_id, p.as_read(p.now)
    fresh = p.inserted.setdefault("event", {})
    for event_id, facts in grouped.items():
        fact = facts[-1]
        p.event_projects[event_id] = fact.project_id
        p.publishes("event", event_id, merged_sources(facts))
        values = {
            "project_id": fact.project_id,
            "conversation_id": fact.conversation_id,
            "kind": fact.kind,
            "title": fact.title,
            "summary": fact.summary,
            # Bound as before (the same instant in UTC), and as a read gives it back.
            "occurred_at": p.as_read(fact.occurred_at),
            "outcome": fact.outcome,
            "layer": fact.layer,
            "last_result_id": rid,
        }
        if event_id in stored:
            updates.append({"b_id": event_id, **values})
        else:
            fresh[event_id] = row = {
                "event_id": event_id,
                "first_result_id": rid,
                "created_at": now,
                **values,
            }
            inserts.append(row)
    if inserts:
        insert_rows(p.c, t.graph_events, inserts)
    if updates:
        p.c.execute(
            update(t.graph_events)
            .where(t.graph_events.c.event_id == bindparam("b_id"))
            .values({name: bindparam(name) for name in updates[0] if name != "b_id"}),
            updates,
        )
    ee = t.event_entities.c
    have: set[tuple[str, str]] = set()
    for part in chunks(sorted(stored)):
        query = select(ee.event_id, ee.entity_id).where(ee.event_id.in_(part))
        have.update((row[0], row[1]) for row in p.c.execute(query))
    links = [
        {"event_id": event_id, "entity_id": entity_id}
        for event_id, ids in linked.items()
        for entity_id in ids
        if (event_id, entity_id) not in have
    ]
    if links:
        insert_rows(p.c, t.event_entities, links)
    for event_id in fresh:
        p.inserted_links[event_id] = sorted(linked[event_id])
    p.counts["events"] = len(grouped)


def write_changes(p: PublishState) -> None:
    """Record this result's entity changes: new rows, so earlier ones are never touched."""
    p.require(
        "entities",
        set(p.entity_projects),
        t.entities.c.entity_id,
        (fact.entity_id for fact in p.draft.changes),
    )
    rows = []
    for index, fact in enumerate(p.draft.changes):
        change_id = derived_id("change", p.result_id, str(index))
        p.publishes("entity_change", change_id, fact.sources)
        rows.append(
            {
                "change_id": change_id,
                "entity_id": fact.entity_id,
                "result_id": p.result_id,
                "kind": fact.kind,
                "description": fact.description,
                "layer": fact.layer,
                "state": "automatic",
                "created_at": p.now,
            }
        )
    if rows:
        insert_rows(p.c, t.entity_changes, rows)
    p.counts["changes"] = len(rows)


def write_relations(p: PublishState) -> None:
    """Execute the policy's decisions for each relation: insert, update (automatic),
    protect (edited) or skip (revoked) (``proctor.graph.decide_relations``)."""
    grouped = group_by_identity(
        p.draft.relations, lambda f: relation_id(f.from_entity_id, f.to_entity_id, f.type)
    )
    p.require(
        "entities",
        set(p.entity_projects),
        t.entities.c.entity_id,
        (e for facts in grouped.values() for e in (facts[0].from_entity_id, facts[0].to_entity_id)),
    )
    stored = p.rows(t.relations, t.relations.c.relation_id, grouped)
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    held = {key: StoredRelation(row["state"], row["reason"]) for key, row in stored.items()}
    rid = p.result_id
    fresh = p.inserted.setdefault("relation", {})
    for decision in decide_relations(grouped, held):
        key, fact = decision.object_id, decision.fact
        if decision.action == "skip":
            p.counts["revoked_relations_skipped"] += 1
            continue
        p.publishes("relation", key, decision.sources)
        if decision.action == "insert":
            fresh[key] = row = {
                "relation_id": key,
                "project_id": p.entity_project(fact.from_entity_id),
                "from_entity_id": fact.from_entity_id,
                "to_entity_id": fact.to_entity_id,
                "type": fact.type,
                "reason": fact.reason,
                "layer": fact.layer,
                "state": "automatic",
                "first_result_id": rid,
                "last_result_id": rid,
                "created_at": p.now,
                "updated_at": p.now,
            }
            inserts.append(row)
        elif decision.action == "update":
            updates.append(
                {
                    "b_id": key,
                    "reason": fact.reason,
                    "last_result_id": p.result_id,
                    "updated_at": p.now,
                }
            )
        elif decision.proposal is not None:
            p.needs_review(decision.proposal)
        p.counts["relations"] += 1
    if inserts:
        insert_rows(p.c, t.relations, inserts)
    if updates:
        r = t.relations.c
        p.c.execute(
            update(t.relations)
            .where(r.relation_id == bindparam("b_id"), r.state == "automatic")
            .values(
                reason=bindparam("reason"),
                last_result_id=bindparam("last_result_id"),
                updated_at=bindparam("updated_at"),
            ),
            updates,
        )
