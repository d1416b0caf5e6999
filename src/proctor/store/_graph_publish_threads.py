"""Publishing open items, story lines, experiences and checkpoints (REV-7, REV-9).

Story lines the merge chose (``must_exist``) are re-checked here, inside the publish
transaction: one that is gone fails the publish, and everything rolls back.
Checkpoints move here and nowhere else.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, delete, select, update

from proctor.errors import NotFoundError
from proctor.graph import (
    Checkpoint,
    OpenItemFact,
    StoryLineFact,
    gone_story_lines,
    open_items_to_resolve,
)
from proctor.store import _schema as t
from proctor.store._bulk import insert_rows
from proctor.store._graph_publish_state import PublishState
from proctor.store._graph_rows import chunks, derived_id, open_item_key


def write_open_items(p: PublishState) -> None:
    """Upsert the items reported open; resolve the open ones the draft saw resolved."""
    opened: dict[str, OpenItemFact] = {}
    for fact in p.draft.open_items:
        opened[open_item_key(fact.key)] = fact
    stored = p.rows(t.open_items, t.open_items.c.item_key, opened)
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for key, fact in opened.items():
        p.publishes("open_item", key, fact.sources)
        values = {
            "project_id": fact.project_id,
            "title": fact.title,
            "detail": fact.detail,
            "entity_ids": list(fact.entity_ids),
            "status": "open",
            "layer": fact.layer,
            "last_result_id": p.result_id,
            "resolved_result_id": None,
            "updated_at": p.now,
        }
        if key in stored:
            updates.append({"b_key": key, **values})
        else:
            inserts.append(
                {
                    "item_key": key,
                    "first_result_id": p.result_id,
                    "created_at": p.now,
                    **values,
                }
            )
    if inserts:
        insert_rows(p.c, t.open_items, inserts)
    if updates:
        p.c.execute(
            update(t.open_items)
            .where(t.open_items.c.item_key == bindparam("b_key"))
            .values({name: bindparam(name) for name in updates[0] if name != "b_key"}),
            updates,
        )
    # A key both reported open and resolved stays open: the draft says it is open.
    resolving = {open_item_key(k) for k in p.draft.resolved_open_item_keys} - set(opened)
    stored_status = {
        key: row["status"]
        for key, row in p.rows(t.open_items, t.open_items.c.item_key, resolving).items()
    }
    still_open = open_items_to_resolve(resolving, set(opened), stored_status)
    for part in chunks(sorted(still_open)):
        p.c.execute(
            update(t.open_items)
            .where(t.open_items.c.item_key.in_(part))
            .values(
                status="resolved",
                resolved_result_id=p.result_id,
                last_result_id=p.result_id,
                updated_at=p.now,
            )
        )
    for key in still_open:
        p.publishes("open_item", key)
    p.counts["open_items"] = len(opened)
    p.counts["resolved_open_items"] = len(still_open)


def _line_id(p: PublishState, fact: StoryLineFact) -> str:
    return fact.story_line_id or derived_id("story_line", p.result_id, fact.key)


def write_story_lines(p: PublishState) -> None:
    """Create or continue story lines (re-checking chosen ones) and assign their events."""
    facts = p.draft.story_lines
    keys = [fact.key for fact in facts]
    if len(set(keys)) != len(keys):
        raise ValueError(f"the draft of result {p.result_id} repeats a story line key")
    ids = {fact.key: _line_id(p, fact) for fact in facts}
    for fact in facts:
        if fact.parent_key is not None and (
            fact.parent_key not in ids or fact.parent_key == fact.key
        ):
            raise ValueError(
                f"story line {fact.key!r} names parent {fact.parent_key!r}, "
                "which is not another line of the draft"
            )
    # REV-9: the targets the merge chose are re-checked inside this transaction.
    stored = p.rows(t.story_lines, t.story_lines.c.story_line_id, ids.values())
    gone = gone_story_lines(facts, stored.keys())
    if gone:
        raise NotFoundError(
            f"story line {gone[0].story_line_id} chosen for {gone[0].title!r} no longer exists; "
            "the publish was rolled back and nothing of it was written"
        )
    p.require(
        "events",
        set(p.event_projects),
        t.graph_events.c.event_id,
        (e for fact in facts for e in fact.event_ids),
    )
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    reparents: list[dict[str, Any]] = []
    # A continued line keeps its parent unless a fact names one (the last such fact wins).
    parents = {line_id: row["parent_id"] for line_id, row in stored.items()}
    for fact in facts:
        line_id = ids[fact.key]
        parent_id = None if fact.parent_key is None else ids[fact.parent_key]
        if line_id in stored:
            if parent_id is not None:
                parents[line_id] = parent_id
            updates.append(
                {
                    "b_id": line_id,
                    "title": fact.title,
                    "summary": fact.summary,
                    "parent_id": parents[line_id],
                }
            )
        else:
            inserts.append(
                {
                    "story_line_id": line_id,
                    "project_id": p.project_of(fact.event_ids),
                    "parent_id": None,
                    "title": fact.title,
                    "summary": fact.summary,
                    "first_result_id": p.result_id,
                    "last_result_id": p.result_id,
                    "created_at": p.now,
                    "updated_at": p.now,
                }
            )
            # Parents after every line exists: a sub-thread may come before its parent.
            if parent_id is not None:
                reparents.append({"b_id": line_id, "parent_id": parent_id})
        p.publishes("story_line", line_id)
    sl = t.story_lines.c
    if inserts:
        insert_rows(p.c, t.story_lines, inserts)
    if updates:
        p.c.execute(
            update(t.story_lines)
            .where(sl.story_line_id == bindparam("b_id"))
            .values(
                title=bindparam("title"),
                summary=bindparam("summary"),
                parent_id=bindparam("parent_id"),
                last_result_id=p.result_id,
                updated_at=p.now,
            ),
            updates,
        )
    if reparents:
        p.c.execute(
            update(t.story_lines)
            .where(sl.story_line_id == bindparam("b_id"))
            .values(parent_id=bindparam("parent_id")),
            reparents,
        )
    sle = t.story_line_events.c
    have: set[tuple[str, str]] = set()
    for part in chunks(sorted(set(ids.values()))):
        query = select(sle.story_line_id, sle.event_id).where(sle.story_line_id.in_(part))
        have.update((row[0], row[1]) for row in p.c.execute(query))
    links = []
    for fact in facts:
        for event_id in dict.fromkeys(fact.event_ids):
            pair = (ids[fact.key], event_id)
            if pair not in have:
                have.add(pair)
                links.append(
                    {
                        "story_line_id": pair[0],
                        "event_id": event_id,
                        "result_id": p.result_id,
                    }
                )
    if links:
        insert_rows(p.c, t.story_line_events, links)
    p.counts["story_lines"] = len(facts)


def write_experiences(p: PublishState) -> None:
    """Record lessons with the events that formed them."""
    facts = p.draft.experiences
    p.require(
        "events",
        set(p.event_projects),
        t.graph_events.c.event_id,
        (e for fact in facts for e in fact.event_ids),
    )
    rows: list[dict[str, Any]] = []
    links: list[dict[str, str]] = []
    for index, fact in enumerate(facts):
        experience_id = derived_id("experience", p.result_id, str(index))
        p.publishes("experience", experience_id)
        rows.append(
            {
                "experience_id": experience_id,
                "project_id": p.project_of(fact.event_ids),
                "result_id": p.result_id,
                "title": fact.title,
                "lesson": fact.lesson,
                "created_at": p.now,
            }
        )
        links.extend(
            {"experience_id": experience_id, "event_id": event_id}
            for event_id in dict.fromkeys(fact.event_ids)
        )
    if rows:
        insert_rows(p.c, t.experiences, rows)
    if links:
        insert_rows(p.c, t.experience_events, links)
    p.counts["experiences"] = len(rows)


def write_checkpoints(p: PublishState) -> None:
    """REV-7: checkpoints move here and nowhere else."""
    latest: dict[tuple[str, str, str, str], Checkpoint] = {
        (cp.stage, cp.scope_key, cp.source_type, cp.source_id): cp for cp in p.draft.checkpoints
    }
    ck = t.review_checkpoints.c
    groups: dict[tuple[str, str, str], list[str]] = {}
    for stage, scope_key, source_type, source_id in latest:
        groups.setdefault((stage, scope_key, source_type), []).append(source_id)
    for (stage, scope_key, source_type), source_ids in groups.items():
        if not _any_checkpoint(p, stage, scope_key, source_type):
            continue  # a scope's first review: nothing to replace, no lookup per source
        for part in chunks(source_ids):
            p.c.execute(
                delete(t.review_checkpoints).where(
                    ck.stage == stage,
                    ck.scope_key == scope_key,
                    ck.source_type == source_type,
                    ck.source_id.in_(part),
                )
            )
    if latest:
        insert_rows(
            p.c,
            t.review_checkpoints,
            [
                {
                    "stage": cp.stage,
                    "scope_key": cp.scope_key,
                    "source_type": cp.source_type,
                    "source_id": cp.source_id,
                    "fingerprint": cp.fingerprint,
                    "run_id": p.draft.run_id,
                    "updated_at": p.now,
                }
                for cp in latest.values()
            ],
        )
    p.counts["checkpoints"] = len(latest)


_ANY_CHECKPOINT = (
    select(t.review_checkpoints.c.source_id)
    .where(
        t.review_checkpoints.c.stage == bindparam("stage"),
        t.review_checkpoints.c.scope_key == bindparam("scope_key"),
        t.review_checkpoints.c.source_type == bindparam("source_type"),
    )
    .limit(1)
)


def _any_checkpoint(p: PublishState, stage: str, scope_key: str, source_type: str) -> bool:
    """Whether the scope has a checkpoint of this stage and source type (one probe of the
    primary key's prefix)."""
    found = p.c.execute(
        _ANY_CHECKPOINT, {"stage": stage, "scope_key": scope_key, "source_type": source_type}
    ).first()
    return found is not None
