"""A person's edits to the story graph (REV-4) and the differences waiting for review.

Confirm, revise and remove each run in one transaction and are recorded in
``graph_edits`` with what they replaced. A confirmed, revised or removed object (a
revoked relation) is protected: automatic runs never change it again, and when one
proposes something different the proposal becomes a ``needs_review`` row instead.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, get_args

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, RowMapping

from proctor.errors import ConfigError, NotFoundError
from proctor.graph import ChangeKind, EditAction, EntityKind, GraphObjectType
from proctor.graph.views import GraphEdit, NeedsReviewItem
from proctor.store import _schema as t
from proctor.store._graph_rows import (
    EDITABLE_FIELDS,
    REMOVED_STATE,
    editable_fields,
    editable_table,
)

EDITABLE_TYPES: tuple[GraphObjectType, ...] = get_args(GraphObjectType)
_NAMES: dict[str, GraphObjectType] = {
    **{name: name for name in EDITABLE_TYPES},
    "change": "entity_change",
    "entity-change": "entity_change",
}


def editable_type(object_type: str) -> GraphObjectType:
    """``entity``, ``relation`` or ``entity_change`` (``change`` is accepted for the last)."""
    name = _NAMES.get(object_type)
    if name is None:
        raise ConfigError(f"cannot edit a {object_type!r}; choose entity, relation or change")
    return name


def resolve_object(
    c: Connection, ref: str, object_type: str | None = None
) -> tuple[GraphObjectType, str]:
    """The (type, id) an id or unique id prefix names, among one or all editable types."""
    if not ref:
        raise NotFoundError("give the id of an entity, relation or change")
    types = [editable_type(object_type)] if object_type is not None else list(EDITABLE_TYPES)
    exact: list[tuple[GraphObjectType, str]] = []
    prefixed: list[tuple[GraphObjectType, str]] = []
    for name in types:
        _, column = editable_table(name)
        for found in c.execute(
            select(column).where(column.startswith(ref, autoescape=True)).limit(2)
        ).scalars():
            (exact if found == ref else prefixed).append((name, str(found)))
    if len(exact) == 1:
        return exact[0]
    matches = exact or prefixed
    what = object_type or "entity, relation or change"
    if not matches:
        raise NotFoundError(f"no {what} {ref!r}; `proctor graph show` lists the ids")
    if len(matches) > 1:
        raise ConfigError(f"{ref!r} matches several objects; give more of the id")
    return matches[0]


def _row(c: Connection, object_type: str, object_id: str) -> RowMapping:
    table, column = editable_table(object_type)
    row = c.execute(select(table).where(column == object_id)).mappings().first()
    if row is None:
        raise NotFoundError(f"no {object_type} {object_id!r}")
    return row


def _record(
    c: Connection,
    object_type: GraphObjectType,
    object_id: str,
    action: EditAction,
    before: dict[str, Any],
    after: dict[str, Any],
    now: datetime,
) -> GraphEdit:
    inserted = c.execute(
        insert(t.graph_edits).values(
            object_type=object_type,
            object_id=object_id,
            action=action,
            before=before,
            after=after,
            created_at=now,
        )
    )
    key = inserted.inserted_primary_key
    assert key is not None
    edit_id = int(key[0])
    return GraphEdit(edit_id, object_type, object_id, action, before, after, now)


def edit(
    c: Connection,
    object_type: str,
    ref: str,
    action: EditAction,
    changes: dict[str, str],
    now: datetime,
) -> GraphEdit:
    """Apply one confirm / revise / remove to an object and record it."""
    resolved, object_id = resolve_object(c, ref, object_type)
    allowed = EDITABLE_FIELDS[resolved]
    unknown = sorted(set(changes) - set(allowed))
    if unknown:
        raise ConfigError(
            f"a {resolved.replace('_', ' ')} has no {', '.join(unknown)} to revise; "
            f"it has {', '.join(allowed)}"
        )
    if action == "revise" and not changes:
        raise ConfigError(f"say what to revise: {', '.join(allowed)}")
    kind = changes.get("kind")
    if kind is not None:
        kinds = get_args(EntityKind) if resolved == "entity" else get_args(ChangeKind)
        if kind not in kinds:
            raise ConfigError(f"unknown kind {kind!r}; choose one of {', '.join(kinds)}")
    row = _row(c, resolved, object_id)
    before = editable_fields(resolved, row)
    state = {"confirm": "confirmed", "revise": "revised", "remove": REMOVED_STATE[resolved]}[action]
    values: dict[str, Any] = {**changes, "state": state}
    if resolved != "entity_change":
        values["updated_at"] = now
    table, column = editable_table(resolved)
    c.execute(update(table).where(column == object_id).values(**values))
    after = {**before, **changes, "state": state}
    return _record(c, resolved, object_id, action, before, after, now)


def _current(c: Connection, object_type: str, object_id: str) -> dict[str, Any] | None:
    if object_type not in EDITABLE_FIELDS:
        return None
    table, column = editable_table(object_type)
    row = c.execute(select(table).where(column == object_id)).mappings().first()
    return None if row is None else editable_fields(object_type, row)


def _item(c: Connection, row: RowMapping) -> NeedsReviewItem:
    return NeedsReviewItem(
        item_id=int(row["item_id"]),
        object_type=row["object_type"],
        object_id=row["object_id"],
        result_id=row["result_id"],
        reason=row["reason"],
        proposed=dict(row["proposed"] or {}),
        current=_current(c, row["object_type"], row["object_id"]),
        status=row["status"],
        created_at=row["created_at"],
    )


def needs_review_items(c: Connection, status: str | None) -> list[NeedsReviewItem]:
    """Differences waiting for a person (``status`` None: every one), oldest first."""
    nr = t.needs_review.c
    query = select(t.needs_review).order_by(nr.created_at, nr.item_id)
    if status is not None:
        query = query.where(nr.status == status)
    return [_item(c, row) for row in c.execute(query).mappings().all()]


def needs_review_of(c: Connection, object_type: str, object_id: str) -> list[NeedsReviewItem]:
    """Every needs-review item of one object, oldest first."""
    nr = t.needs_review.c
    rows = c.execute(
        select(t.needs_review)
        .where(nr.object_type == object_type, nr.object_id == object_id)
        .order_by(nr.created_at, nr.item_id)
    ).mappings()
    return [_item(c, row) for row in rows.all()]


def dismiss(c: Connection, item_id: int) -> NeedsReviewItem:
    """Mark a difference as seen and not wanted; the same proposal is not raised again."""
    nr = t.needs_review.c
    row = c.execute(select(t.needs_review).where(nr.item_id == item_id)).mappings().first()
    if row is None:
        raise NotFoundError(
            f"no needs-review item {item_id}; `proctor graph needs-review` lists them"
        )
    c.execute(update(t.needs_review).where(nr.item_id == item_id).values(status="dismissed"))
    return dataclasses.replace(_item(c, row), status="dismissed")


def edits_of(c: Connection, object_type: str, object_id: str) -> list[GraphEdit]:
    """Every edit of one object, oldest first."""
    ge = t.graph_edits.c
    rows = c.execute(
        select(t.graph_edits)
        .where(ge.object_type == object_type, ge.object_id == object_id)
        .order_by(ge.created_at, ge.edit_id)
    ).mappings()
    return [
        GraphEdit(
            int(row["edit_id"]),
            row["object_type"],
            row["object_id"],
            row["action"],
            row["before"],
            row["after"],
            row["created_at"],
        )
        for row in rows
    ]
