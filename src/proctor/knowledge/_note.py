"""The Markdown Proctor writes about an entity: a new note, or a dated section to append.

What a review observed (names, descriptions, reasons, excerpts) is untrusted: every such
value is flattened to one line and shortened, and only ever follows a label Proctor wrote,
so it cannot start a heading or a list of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from proctor._util.text import one_line
from proctor.errors import NotFoundError
from proctor.graph import SourceRef
from proctor.graph.views import (
    GRAPH_LIMIT,
    EntityDetail,
    EntityView,
    GraphView,
    ResultSummary,
    SourceExcerpt,
)

NOTE_EVENTS = 20
"""Dated events a note lists (the newest)."""
NOTE_RELATIONS = 20
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NOTE_SOURCES = 20


class EntityReader(Protocol):
    """The store reads a note is built from."""

    def resolve_result_id(self, ref: str) -> str:
        """A result id from a full id or unique prefix."""
        ...

    def result(self, result_id: str) -> ResultSummary:
        """One result."""
        ...

    def graph(
        self,
        result_id: str,
        story_line_id: str | None = None,
        *,
        as_published: bool = False,
        limit: int | None = GRAPH_LIMIT,
        offset: int = 0,
    ) -> GraphView:
        """What one result published."""
        ...

    def entity(self, entity_id: str) -> EntityDetail:
        """One entity with everything that mentions it."""
        ...


@dataclass(frozen=True, slots=True)
class EntityNote:
    """The two forms of a note about one entity, as of one result."""

    entity: EntityView
    result: ResultSummary
    title: str
    new_text: str
    """A whole new entry."""
    section_text: str
    """A dated section to append to an existing entry."""


def flat(text: str, limit: int = 300) -> str:
    """Observed text on one line, shortened; Markdown cannot start a block inside a line."""
    return one_line(text, limit)


def _day(value: datetime | None) -> str:
    return "undated" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True, slots=True)
class EntityNoteInput:
    """An entity with the result view that contains it (names and excerpts come from it)."""

    detail: EntityDetail
    view: GraphView


def entity_in_result(reader: EntityReader, result_ref: str, entity_ref: str) -> EntityNoteInput:
    """The entity (id or prefix) as a result published it; refused when it is not in it."""
    result_id = reader.resolve_result_id(result_ref)
    detail = reader.entity(entity_ref)
    entity_id = detail.entity.entity_id
    view = reader.graph(result_id)
    if entity_id not in {e.entity_id for e in view.entities} and view.truncated:
        view = reader.graph(result_id, limit=None)
    if entity_id not in {e.entity_id for e in view.entities}:
        raise NotFoundError(
            f"the entity {entity_ref!r} is not part of result {result_id[:12]}; "
            f"`proctor graph show {result_id[:12]}` lists its entities"
        )
    return EntityNoteInput(detail, view)


def _citation(ref: SourceRef, excerpts: Mapping[tuple[str, str], SourceExcerpt]) -> str:
    excerpt = excerpts.get((ref.source_type, ref.source_id))
    label = f"{ref.source_type} `{flat(ref.source_id, 160)}`"
    if excerpt is None:
        return label
    gone = "" if excerpt.exists else " (deleted)"
    return f"{label} · {_day(excerpt.occurred_at)} · {flat(excerpt.title, 80)}{gone}"


def _body(source: EntityNoteInput, result_dates: Mapping[str, datetime], heading: str) -> list[str]:
    detail, view = source.detail, source.view
    names = {e.entity_id: e.name for e in view.entities}
    lines = [f"{heading} Changes over time", ""]
    events = detail.events[-NOTE_EVENTS:]
    if len(detail.events) > len(events):
        lines.append(f"- ({len(detail.events) - len(events)} earlier events not listed)")
    dated: list[tuple[datetime | None, str]] = [
        (
            event.occurred_at,
            f"{flat(event.kind, 40)} · {flat(event.title, 160)} ({flat(event.outcome, 20)})",
        )
        for event in events
    ]
    dated += [
        (
            result_dates.get(change.result_id),
            f"{flat(change.kind, 40)} (review result {change.result_id[:12]}): "
            f"{flat(change.description)}",
        )
        for change in detail.changes
    ]
    # Oldest first; anything undated last, in the order the store gave it.
    for when, text in sorted(dated, key=lambda pair: (pair[0] is None, pair[0] or _EPOCH)):
        lines.append(f"- {_day(when)} · {text}")
    if not dated:
        lines.append("- No dated events or changes yet.")
    relations = [r for r in detail.relations if r.state != "revoked"]
    if relations:
        lines += ["", f"{heading} Relations", ""]
        for relation in relations[:NOTE_RELATIONS]:
            other_id = (
                relation.to_entity_id
                if relation.from_entity_id == detail.entity.entity_id
                else relation.from_entity_id
            )
            arrow = "→" if other_id == relation.to_entity_id else "←"
            other = names.get(other_id, other_id[:12])
            lines.append(
                f"- {arrow} {flat(relation.type, 40)} {flat(other, 120)}: {flat(relation.reason)}"
            )
        if len(relations) > NOTE_RELATIONS:
            lines.append(f"- ({len(relations) - NOTE_RELATIONS} more relations not listed)")
    refs = _cited(detail)
    if refs:
        lines += ["", f"{heading} Sources", ""]
        lines += [f"- {_citation(ref, view.sources)}" for ref in refs[:NOTE_SOURCES]]
        if len(refs) > NOTE_SOURCES:
            lines.append(f"- ({len(refs) - NOTE_SOURCES} more sources not listed)")
    return lines


def _cited(detail: EntityDetail) -> list[SourceRef]:
    seen: dict[tuple[str, str], SourceRef] = {}
    groups: Sequence[Sequence[SourceRef]] = [
        detail.entity.sources,
        *[event.sources for event in reversed(detail.events)],
        *[change.sources for change in detail.changes],
    ]
    for group in groups:
        for ref in group:
            seen.setdefault((ref.source_type, ref.source_id), ref)
    return list(seen.values())


def build_entity_note(
    source: EntityNoteInput, result_dates: Mapping[str, datetime], now: datetime
) -> EntityNote:
    """A new note and an appendable section for the entity, as of the view's result."""
    entity, result = source.detail.entity, source.view.result
    title = flat(entity.name, 160) or entity.entity_id
    about = [
        f"- Kind: {flat(entity.kind, 40)}",
        f"- Entity id: `{entity.entity_id}`",
        f"- What it is: {flat(entity.description, 600) or '(no description yet)'}",
        f"- State: {flat(entity.state, 20)}",
    ]
    new_text = "\n".join(
        [
            f"# {title}",
            "",
            f"Written by Proctor on {now:%Y-%m-%d} from review result {result.result_id[:12]} "
            f"({flat(result.scope_label, 80)}). Edit freely: Proctor only appends dated "
            "sections below what you write.",
            "",
            *about,
            "",
            *_body(source, result_dates, "##"),
            "",
        ]
    )
    section_text = "\n".join(
        [
            f"## Update {now:%Y-%m-%d} from review result {result.result_id[:12]}",
            "",
            *about,
            "",
            *_body(source, result_dates, "###"),
            "",
        ]
    )
    return EntityNote(entity, result, title, new_text, section_text)
