"""Reading one result's changes for suggestions (HB-5): only what that result published.

Every object comes from ``result_objects`` of the result, so a suggestion never reaches
past the result it is made from. Evidence is the distinct original sources (type, id)
citing the object in this result or an earlier one: a later result citing the same
source again adds a ``source_refs`` row, never a second source. Each carries the source's
current content hash, so an edited source changes the evidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.engine import Connection, RowMapping

from proctor.errors import NotFoundError
from proctor.store import _schema as t
from proctor.store._graph_rows import chunks
from proctor.store._suggestion_records import ChangedObject, EvidenceRef, ResultChanges

_Key = tuple[str, str]


def result_changes(c: Connection, result_id: str, min_sources: int) -> ResultChanges:
    """The open items, disagreements, conventions and revisions one result published."""
    result = c.execute(select(t.results).where(t.results.c.result_id == result_id)).mappings()
    row = result.first()
    if row is None:
        raise NotFoundError(f"no result {result_id!r}; see `proctor graph list`")
    published: dict[str, list[str]] = defaultdict(list)
    for object_type, object_id in c.execute(
        select(t.result_objects.c.object_type, t.result_objects.c.object_id).where(
            t.result_objects.c.result_id == result_id
        )
    ):
        published[object_type].append(object_id)

    open_rows = _rows(c, t.open_items, t.open_items.c.item_key, published["open_item"])
    open_rows = [r for r in open_rows if r["status"] == "open"]
    relation_rows = [
        r
        for r in _rows(c, t.relations, t.relations.c.relation_id, published["relation"])
        if r["type"] == "contrasts" and r["state"] != "revoked"
    ]
    relation_rows = [r for r in relation_rows if not _superseded(c, r)]
    entity_rows = [
        r
        for r in _rows(c, t.entities, t.entities.c.entity_id, published["entity"])
        if r["state"] == "automatic"
    ]
    change_rows = [
        r
        for r in _rows(
            c, t.entity_changes, t.entity_changes.c.change_id, published["entity_change"]
        )
        if r["kind"] == "revised" and r["state"] != "removed"
    ]
    names = _entity_names(
        c,
        [r["from_entity_id"] for r in relation_rows]
        + [r["to_entity_id"] for r in relation_rows]
        + [r["entity_id"] for r in change_rows],
    )
    wanted = (
        [("open_item", r["item_key"]) for r in open_rows]
        + [("relation", r["relation_id"]) for r in relation_rows]
        + [("entity", r["entity_id"]) for r in entity_rows]
        + [("entity_change", r["change_id"]) for r in change_rows]
    )
    evidence = _evidence(c, wanted, row["created_at"])

    open_items = tuple(
        ChangedObject(
            "open_item",
            r["item_key"],
            r["project_id"],
            r["title"],
            r["detail"],
            None,
            None,
            r["updated_at"],
            evidence.get(("open_item", r["item_key"]), ()),
        )
        for r in open_rows
    )
    disagreements = tuple(
        ChangedObject(
            "relation",
            r["relation_id"],
            r["project_id"],
            f"{names.get(r['from_entity_id'], '?')} contrasts {names.get(r['to_entity_id'], '?')}",
            r["reason"],
            None,
            None,
            r["updated_at"],
            evidence.get(("relation", r["relation_id"]), ()),
        )
        for r in relation_rows
    )
    conventions = tuple(
        ChangedObject(
            "entity",
            r["entity_id"],
            r["project_id"],
            r["name"],
            r["description"],
            r["entity_id"],
            r["kind"],
            r["updated_at"],
            evidence.get(("entity", r["entity_id"]), ()),
        )
        for r in entity_rows
        if len(evidence.get(("entity", r["entity_id"]), ())) >= min_sources
    )
    revisions = tuple(
        ChangedObject(
            "entity_change",
            r["change_id"],
            row["project_id"],
            names.get(r["entity_id"], "?"),
            r["description"],
            r["entity_id"],
            None,
            r["created_at"],
            evidence.get(("entity_change", r["change_id"]), ()),
        )
        for r in change_rows
    )
    return ResultChanges(
        result_id=result_id,
        run_id=row["run_id"],
        project_id=row["project_id"],
        open_items=open_items,
        disagreements=disagreements,
        conventions=conventions,
        revisions=revisions,
    )


def _rows(c: Connection, table: Any, column: Any, ids: Iterable[str]) -> list[RowMapping]:
    found: list[RowMapping] = []
    for part in chunks(sorted(set(ids))):
        found.extend(c.execute(select(table).where(column.in_(part))).mappings())
    return found


def _superseded(c: Connection, relation: RowMapping) -> bool:
    """True when a ``supersedes`` relation (not revoked) joins the two entities either way."""
    ends = (relation["from_entity_id"], relation["to_entity_id"])
    r = t.relations.c
    found = c.execute(
        select(r.relation_id)
        .where(
            r.type == "supersedes",
            r.state != "revoked",
            or_(
                and_(r.from_entity_id == ends[0], r.to_entity_id == ends[1]),
                and_(r.from_entity_id == ends[1], r.to_entity_id == ends[0]),
            ),
        )
        .limit(1)
    ).first()
    return found is not None


def _entity_names(c: Connection, ids: Iterable[str]) -> dict[str, str]:
    names: dict[str, str] = {}
    for part in chunks(sorted(set(ids))):
        names.update(
            (str(entity_id), str(name))
            for entity_id, name in c.execute(
                select(t.entities.c.entity_id, t.entities.c.name).where(
                    t.entities.c.entity_id.in_(part)
                )
            )
        )
    return names


def _evidence(c: Connection, wanted: list[_Key], until: Any) -> dict[_Key, tuple[EvidenceRef, ...]]:
    """Distinct sources per object, cited by results published no later than ``until``."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for object_type, object_id in wanted:
        by_type[object_type].append(object_id)
    refs, results, sources = t.source_refs.c, t.results.c, t.sources.c
    found: dict[_Key, dict[tuple[str, str], str | None]] = defaultdict(dict)
    for object_type, ids in by_type.items():
        for part in chunks(sorted(set(ids))):
            query = (
                select(refs.object_id, refs.source_type, refs.source_id, sources.content_hash)
                .join(t.results, results.result_id == refs.result_id)
                .outerjoin(
                    t.sources,
                    and_(
                        sources.source_type == refs.source_type,
                        sources.source_id == refs.source_id,
                    ),
                )
                .where(
                    refs.object_type == object_type,
                    refs.object_id.in_(part),
                    results.created_at <= until,
                )
            )
            for object_id, source_type, source_id, content_hash in c.execute(query):
                found[(object_type, object_id)][(source_type, source_id)] = content_hash
    return {
        key: tuple(EvidenceRef(st, sid, found[key][(st, sid)]) for st, sid in sorted(found[key]))
        for key in found
    }
