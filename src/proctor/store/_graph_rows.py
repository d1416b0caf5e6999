"""What the story-graph parts of the store share: object types, derived ids, row mapping.

Ids the publish derives (relations, entity changes, new story lines, experiences) are
UUIDv5 of what they are about, so publishing the same draft gives the same rows and a
relation (from, to, type) has exactly one row, revoked or not (REV-4).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar, cast

import orjson
from pydantic import TypeAdapter
from sqlalchemy import String, any_, bindparam, func, select
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement

from proctor.graph import Coverage, SourceRef
from proctor.graph.views import (
    EntityChangeView,
    EntityView,
    EventView,
    ExperienceView,
    OpenItemView,
    RelationView,
    StoryLineView,
)
from proctor.store import _schema as t

ObjectType = Literal[
    "entity", "event", "relation", "entity_change", "open_item", "story_line", "experience"
]
"""How ``result_objects``, ``source_refs``, ``needs_review`` and ``graph_edits`` name objects."""

EditableType = Literal["entity", "relation", "entity_change"]
"""The objects a person may confirm, revise or remove (REV-4)."""

PROTECTED_STATES = frozenset({"confirmed", "revised", "removed", "revoked"})
"""States automatic runs never change (REV-4)."""

NEEDS_REVIEW_REASON = "automatic_proposal_differs"

_NAMESPACE = uuid.UUID("0c4f2b1e-3f0e-4d8e-9d0a-6a3e2f5b7c11")
_ID_LENGTH = 255
"""Width of the id columns: longer open item keys are shortened deterministically."""
_CHUNK = 500
"""Ids per ``IN (…)`` list: well under every backend's bound-parameter limit."""

T = TypeVar("T")


def derived_id(*parts: str) -> str:
    """A UUIDv5 of the parts: the same parts, the same id."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(parts)))


def relation_id(from_entity_id: str, to_entity_id: str, relation_type: str) -> str:
    """The one id of a relation (from, to, type): a revoked one keeps it, so it stays revoked."""
    return derived_id("relation", from_entity_id, to_entity_id, relation_type)


def open_item_key(key: str) -> str:
    """The stored key of an open item: itself, or a stable shortening when too long for an id."""
    if len(key) <= _ID_LENGTH:
        return key
    digest = hashlib.blake2b(key.encode(), digest_size=16).hexdigest()
    return f"{key[: _ID_LENGTH - len(digest) - 1]}#{digest}"


def chunks(values: Sequence[T], size: int = _CHUNK) -> Iterator[Sequence[T]]:
    """``values`` in slices of at most ``size``."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def among(
    c: Connection, column: Any, ids: Iterable[str], *, name: str | None = None
) -> ColumnElement[bool]:
    """``column IN ids`` with the whole list bound as one value: a JSON array read by
    ``json_each`` on SQLite, an array compared with ``= ANY`` on PostgreSQL. One statement
    whatever the number of ids (no ``IN`` chunks), and no clause or placeholder per id
    for SQLAlchemy to build, cache-key and expand (≈ 4 ms of CPU per 500 ids). ``name``
    names the bound value, for a statement ``fetch`` keeps compiled (``bound_ids``)."""
    value = bound_ids(c, ids)
    if c.dialect.name == "sqlite":
        listed = func.json_each(bindparam(name, value, type_=String))
        return column.in_(select(listed.table_valued("value").c.value))  # type: ignore[no-any-return]
    if c.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import ARRAY  # not on SQLite's start

        return column == any_(bindparam(name, value, type_=ARRAY(String)))  # type: ignore[no-any-return]
    return column.in_(value)  # type: ignore[no-any-return]


def bound_ids(c: Connection, ids: Iterable[str]) -> Any:
    """The value ``among`` binds for ``ids`` on this connection's database."""
    values = list(ids)
    return orjson.dumps(values).decode() if c.dialect.name == "sqlite" else values


_Processors = tuple[tuple[int, Callable[[Any], Any]], ...]
_COMPILED: dict[
    tuple[str, Any], tuple[str, tuple[str, ...] | None, dict[str, Any], _Processors]
] = {}
"""Statements ``fetch`` compiled, by dialect and key: SQL, parameter order (positional
drivers), default parameters, and the result columns' processors."""


def fetch(
    c: Connection, key: Any, build: Callable[[], Select[Any]], **values: Any
) -> list[tuple[Any, ...]]:
    """The rows of the statement ``build()`` makes, with its named bound ``values``.

    A graph page runs about twenty statements over a few thousand rows; built, cache-keyed
    and fetched through SQLAlchemy's ``Connection.execute`` each time, that was two thirds
    of its CPU. Here the statement is built and compiled once per database and ``key``
    (which must name everything that shapes it: only the named ``values`` change between
    calls), run with ``exec_driver_sql`` (the same SQL, events and transaction), and its
    rows fetched at once, each column through the processor SQLAlchemy would apply (UTC
    times, JSON on SQLite): the same values as ``execute``, as plain tuples."""
    dialect = c.dialect
    entry = _COMPILED.get((dialect.name, key))
    if entry is None:
        statement = build()
        compiled = statement.compile(dialect=dialect)
        processors: _Processors = tuple(
            (index, processor)
            for index, column in enumerate(statement.selected_columns)
            if (processor := column.type._cached_result_processor(dialect, None)) is not None
        )
        positions = compiled.positiontup
        order = None if positions is None else tuple(positions)
        entry = (str(compiled), order, compiled.params, processors)
        _COMPILED[(dialect.name, key)] = entry
    sql, order, defaults, processors = entry
    if not values.keys() <= defaults.keys():
        raise ValueError(f"{key!r} binds no {sorted(values.keys() - defaults.keys())}")
    params = {**defaults, **values}
    result = c.exec_driver_sql(sql, params if order is None else tuple(params[n] for n in order))
    rows = cast(list[tuple[Any, ...]], result.cursor.fetchall())
    result.close()
    if not processors:
        return rows
    converted: list[tuple[Any, ...]] = []
    for row in rows:
        cells = list(row)
        for index, process in processors:
            cells[index] = process(cells[index])
        converted.append(tuple(cells))
    return converted


def existing_ids(connection: Connection, column: Any, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` a key column holds."""
    wanted = sorted(set(ids))
    found: set[str] = set()
    for part in chunks(wanted):
        found.update(connection.execute(select(column).where(column.in_(part))).scalars())
    return found


def ref_json(ref: SourceRef) -> dict[str, Any]:
    """A source reference as JSON (snapshots, needs-review proposals)."""
    return {
        "source_type": ref.source_type,
        "source_id": ref.source_id,
        "field": ref.field,
        "start": ref.start,
        "end": ref.end,
    }


def ref_from_row(row: RowMapping) -> SourceRef:
    """A ``source_refs`` row as a reference."""
    return SourceRef(
        row["source_type"], row["source_id"], row["field"], row["start_offset"], row["end_offset"]
    )


_COVERAGE: TypeAdapter[Coverage] = TypeAdapter(Coverage)


def coverage_json(coverage: Coverage) -> dict[str, Any]:
    """Coverage as stored in ``results.coverage``."""
    return _COVERAGE.dump_python(coverage, mode="json")  # type: ignore[no-any-return]


def coverage_from_json(data: Any) -> Coverage:
    """Read back :func:`coverage_json`."""
    return _COVERAGE.validate_python(data)


_VIEW_COLUMNS: dict[str, tuple[str, ...]] = {
    "entities": (
        "entity_id", "project_id", "kind", "name", "description", "identity_key", "layer",
        "state", "updated_at",
    ),
    "graph_events": (
        "event_id", "project_id", "conversation_id", "kind", "title", "summary",
        "occurred_at", "outcome", "layer",
    ),
    "relations": (
        "relation_id", "project_id", "from_entity_id", "to_entity_id", "type", "reason",
        "layer", "state",
    ),
    "entity_changes": (
        "change_id", "entity_id", "result_id", "kind", "description", "layer", "state",
        "created_at",
    ),
    "open_items": (
        "item_key", "project_id", "title", "detail", "status", "layer", "entity_ids",
        "resolved_result_id",
    ),
    "story_lines": ("story_line_id", "project_id", "parent_id", "title", "summary", "updated_at"),
    "experiences": ("experience_id", "project_id", "title", "lesson"),
}  # fmt: skip


def view_select(table: Any) -> Any:
    """``SELECT`` of just what a view of ``table`` needs (timestamps cost the most to read)."""
    return select(*(table.c[name] for name in _VIEW_COLUMNS[table.name]))


def view_columns(table: Any) -> tuple[str, ...]:
    """The columns ``view_select`` reads of ``table``, in its order."""
    return _VIEW_COLUMNS[table.name]


def entity_view(
    row: Mapping[Any, Any], sources: tuple[SourceRef, ...] = (), source_count: int | None = None
) -> EntityView:
    """An ``entities`` row as a view."""
    return EntityView(
        entity_id=row["entity_id"],
        project_id=row["project_id"],
        kind=row["kind"],
        name=row["name"],
        description=row["description"],
        identity_key=row["identity_key"],
        layer=row["layer"],
        state=row["state"],
        sources=sources,
        source_count=len(sources) if source_count is None else source_count,
        updated_at=row["updated_at"],
    )


def event_view(
    row: Mapping[Any, Any],
    entity_ids: tuple[str, ...] = (),
    story_line_ids: tuple[str, ...] = (),
    sources: tuple[SourceRef, ...] = (),
    source_count: int | None = None,
) -> EventView:
    """A ``graph_events`` row as a view."""
    return EventView(
        event_id=row["event_id"],
        project_id=row["project_id"],
        conversation_id=row["conversation_id"],
        kind=row["kind"],
        title=row["title"],
        summary=row["summary"],
        occurred_at=row["occurred_at"],
        outcome=row["outcome"],
        layer=row["layer"],
        entity_ids=entity_ids,
        story_line_ids=story_line_ids,
        sources=sources,
        source_count=len(sources) if source_count is None else source_count,
    )


def relation_view(
    row: Mapping[Any, Any], sources: tuple[SourceRef, ...] = (), source_count: int | None = None
) -> RelationView:
    """A ``relations`` row as a view."""
    return RelationView(
        relation_id=row["relation_id"],
        project_id=row["project_id"],
        from_entity_id=row["from_entity_id"],
        to_entity_id=row["to_entity_id"],
        type=row["type"],
        reason=row["reason"],
        layer=row["layer"],
        state=row["state"],
        sources=sources,
        source_count=len(sources) if source_count is None else source_count,
    )


def change_view(
    row: Mapping[Any, Any], sources: tuple[SourceRef, ...] = (), source_count: int | None = None
) -> EntityChangeView:
    """An ``entity_changes`` row as a view."""
    return EntityChangeView(
        change_id=row["change_id"],
        entity_id=row["entity_id"],
        result_id=row["result_id"],
        kind=row["kind"],
        description=row["description"],
        layer=row["layer"],
        state=row["state"],
        sources=sources,
        source_count=len(sources) if source_count is None else source_count,
    )


def open_item_view(
    row: Mapping[Any, Any], sources: tuple[SourceRef, ...] = (), source_count: int | None = None
) -> OpenItemView:
    """An ``open_items`` row as a view."""
    return OpenItemView(
        key=row["item_key"],
        project_id=row["project_id"],
        title=row["title"],
        detail=row["detail"],
        status=row["status"],
        layer=row["layer"],
        entity_ids=tuple(row["entity_ids"] or ()),
        resolved_result_id=row["resolved_result_id"],
        sources=sources,
        source_count=len(sources) if source_count is None else source_count,
    )


def story_line_view(
    row: Mapping[Any, Any],
    event_ids: tuple[str, ...] = (),
    event_count: int | None = None,
    first_at: datetime | None = None,
    last_at: datetime | None = None,
) -> StoryLineView:
    """A ``story_lines`` row as a view (``event_count``: all its events, else ``event_ids``)."""
    return StoryLineView(
        story_line_id=row["story_line_id"],
        project_id=row["project_id"],
        parent_id=row["parent_id"],
        title=row["title"],
        summary=row["summary"],
        event_ids=event_ids,
        first_at=first_at,
        last_at=last_at,
        updated_at=row["updated_at"],
        event_count=len(event_ids) if event_count is None else event_count,
    )


def experience_view(row: Mapping[Any, Any], event_ids: tuple[str, ...] = ()) -> ExperienceView:
    """An ``experiences`` row as a view."""
    return ExperienceView(
        experience_id=row["experience_id"],
        project_id=row["project_id"],
        title=row["title"],
        lesson=row["lesson"],
        event_ids=event_ids,
    )


EDITABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "entity": ("name", "description", "kind"),
    "relation": ("reason",),
    "entity_change": ("description", "kind"),
}
"""What a person may revise on each editable object (a relation's ends and type are its
identity; revising them would be a different relation)."""

REMOVED_STATE: dict[str, str] = {
    "entity": "removed",
    "relation": "revoked",
    "entity_change": "removed",
}


def editable_table(object_type: str) -> tuple[Any, Any]:
    """The table and id column of an editable object type."""
    if object_type == "entity":
        return t.entities, t.entities.c.entity_id
    if object_type == "relation":
        return t.relations, t.relations.c.relation_id
    return t.entity_changes, t.entity_changes.c.change_id


def editable_fields(object_type: str, row: RowMapping) -> dict[str, Any]:
    """What a person sees and may change of an object, with its state."""
    fields = {name: row[name] for name in EDITABLE_FIELDS[object_type]}
    fields["state"] = row["state"]
    return fields
