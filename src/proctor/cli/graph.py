"""``proctor graph``: read a review's story graph and correct it (REV-4, REV-8 … REV-12).

``show`` prints one result as a timeline of events grouped by story line, with the
entities and relations involved, open items and what the result covered (at most
``--limit`` events, the newest, and says how many it left out); ``list`` the
results; ``confirm`` / ``revise`` / ``remove`` are a person's edits, which later
automatic reviews never overwrite; ``needs-review`` lists where a review disagreed.
Everything observed (names, titles, summaries) is printed literally.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click
from rich.text import Text

from proctor._util.text import one_line
from proctor.cli._common import console, json_option, print_json, readable_store, writable_store
from proctor.cli._refs import unique_prefixes
from proctor.cli._render import when
from proctor.graph import Coverage
from proctor.graph.views import (
    GRAPH_LIMIT,
    EventView,
    GraphEdit,
    GraphView,
    NeedsReviewItem,
    ResultSummary,
    StoryLineView,
)

_TYPES = {"entity": "entity", "relation": "relation", "change": "entity_change"}
_OUTCOME_STYLE = {"ok": "green", "failed": "red", "unknown": "dim"}
_STATE_STYLE = {
    "automatic": "dim",
    "confirmed": "green",
    "revised": "cyan",
    "removed": "red",
    "revoked": "red",
}


@click.group()
def graph() -> None:
    """Read reviews' story graphs and correct them (confirm, revise, remove)."""


# --- reading -----------------------------------------------------------------------------


@graph.command("list")
@click.option("--target", help="Only results of this project (name or id) or review scope.")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@json_option()
def list_command(target: str | None, limit: int, as_json: bool) -> None:
    """List published review results, newest first."""
    with readable_store() as store:
        results = store.overview(target, limit=limit)
    if as_json:
        print_json([_result_json(r) for r in results])
        return
    if not results:
        console.print("No results yet. Run `proctor review run` to review stored conversations.")
        return
    refs = unique_prefixes([result.result_id for result in results], 12)
    for result in results:
        line = Text.assemble(
            (refs[result.result_id], "bold"),
            "  ",
            when(result.created_at),
            "  ",
            (result.scope_label, "cyan"),
            f"  {result.trigger}  ",
            (
                "complete" if result.complete else "partial",
                "green" if result.complete else "yellow",
            ),
            "  ",
            one_line(result.summary, 80),
        )
        console.print(line)


@graph.command("show")
@click.argument("result", required=False)
@click.option("--story-line", "story_line", help="Only this story line (id or prefix).")
@click.option("--as-published", is_flag=True, help="Names and states as the result said them then.")
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=GRAPH_LIMIT,
    show_default=True,
    help="Show at most this many events: the newest, with what they involve.",
)
@click.option(
    "--offset",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Skip this many of the newest events first (--offset 500: the 500 before them).",
)
@json_option()
def show_command(
    result: str | None,
    story_line: str | None,
    as_published: bool,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """Show one result's story graph (RESULT: id or prefix; default: the latest result).

    A large result shows its newest --limit events and says how many there are; narrow
    it with --story-line, or page back with --offset.
    """
    with readable_store() as store:
        note = None
        if result is None:
            latest = store.overview(limit=1)
            if not latest:
                console.print(
                    "No results yet. Run `proctor review run` to review stored conversations."
                )
                return
            result = latest[0].result_id
            note = "the latest result; `proctor graph list` shows the others"
        view = store.graph(
            result, story_line, as_published=as_published, limit=limit, offset=offset
        )
    if as_json:
        print_json(_view_json(view))
        return
    for line in render_graph(view, note=note):
        console.print(line)


def render_graph(view: GraphView, *, note: str | None = None) -> list[Text]:
    """The lines of ``graph show``: header, timeline by story line, entities, relations …"""
    result = view.result
    names = {e.entity_id: e.name for e in view.entities}
    lines = [
        Text.assemble(
            ("Result ", "bold"),
            (result.result_id[:12], "bold"),
            f" · {result.scope_label} · {result.trigger} · {when(result.created_at)} UTC",
            (f"  ({note})" if note else "", "dim"),
        )
    ]
    if result.time_from or result.time_to:
        lines.append(Text(f"Range {when(result.time_from)} → {when(result.time_to)}", "dim"))
    if result.summary:
        lines.append(Text(result.summary))
    lines.append(Text(coverage_line(result.coverage, result.complete), "dim"))
    if view.as_published:
        lines.append(Text("As published (later edits not shown)", "yellow"))
    if view.truncated:
        lines.append(Text(bounds_line(view), "yellow"))
    lines.extend(_timeline(view, names))
    lines.extend(_entities(view))
    lines.extend(_relations(view, names))
    lines.extend(_changes(view, names))
    if view.open_items or view.totals.open_items:
        lines.append(
            _heading(f"Open items ({_count(len(view.open_items), view.totals.open_items)})")
        )
        for item in view.open_items:
            mark = ("●", "yellow") if item.status == "open" else ("✓", "green")
            detail = f" — {one_line(item.detail, 100)}" if item.detail else ""
            lines.append(
                Text.assemble("  ", mark, f" {item.title}{detail}", (f" [{item.status}]", "dim"))
            )
    if view.experiences:
        lines.append(_heading("Experiences"))
        for experience in view.experiences:
            lesson = f": {one_line(experience.lesson, 120)}" if experience.lesson else ""
            lines.append(Text(f"  {experience.title}{lesson}"))
    if view.truncated:
        lines.append(Text(f"\n{bounds_line(view)}", "yellow"))
    return lines


def bounds_line(view: GraphView) -> str:
    """What a truncated view left out, and how to see it."""
    total = view.totals.events
    shown = len(view.events)
    where = "" if view.story_line_id is None else " of this story line"
    if shown == 0:
        text = f"No events at offset {view.offset:,}: the view holds {total:,} events{where}"
    else:
        skipped = f", after skipping the {view.offset:,} newest" if view.offset else " (the newest)"
        text = f"Showing {shown:,} of {total:,} events{where}{skipped}"
    hint = "use --limit/--offset" if view.story_line_id else "use --story-line, or --limit/--offset"
    return f"{text}; {hint} to see others"


def _count(shown: int, total: int) -> str:
    """``12``, or ``12 of 1,505`` when the view left some out (they involve no shown event)."""
    return f"{shown:,}" if shown >= total else f"{shown:,} of {total:,}"


def coverage_line(coverage: Coverage, complete: bool) -> str:
    """What a result covered (REV-10), in one line."""
    parts = [f"Coverage: {coverage.sources_read} of {coverage.sources_total} sources read"]
    if coverage.sources_omitted:
        parts[0] += f", {coverage.sources_omitted} omitted (deleted)"
    if coverage.gaps:
        parts.append("gaps: " + "; ".join(coverage.gaps))
    parts.append("complete" if complete else "partial")
    semantic = {
        "done": "semantic layer done",
        "skipped": "semantic layer skipped",
        "failed": "semantic layer failed",
        "partial": "semantic layer partial",
    }[coverage.semantic]
    if coverage.semantic_note:
        semantic += f": {coverage.semantic_note}"
    parts.append(semantic)
    return " · ".join(parts)


def _heading(text: str) -> Text:
    return Text(f"\n{text}", "bold")


def _timeline(view: GraphView, names: dict[str, str]) -> list[Text]:
    lines: list[Text] = []
    events = {event.event_id: event for event in view.events}
    children: dict[str | None, list[StoryLineView]] = {}
    known = {line.story_line_id for line in view.story_lines}
    for line in view.story_lines:
        parent = line.parent_id if line.parent_id in known else None
        children.setdefault(parent, []).append(line)

    def walk(line: StoryLineView, depth: int) -> None:
        indent = "  " * depth
        count = max(line.event_count, len(line.event_ids))
        label = "Sub-thread" if depth else "Story line"
        shown = "" if len(line.event_ids) >= count else f", {len(line.event_ids):,} shown"
        lines.append(
            Text.assemble(
                ("\n" if depth == 0 else "", ""),
                (f"{indent}{label}: ", "bold"),
                (line.title, "bold"),
                (
                    f"  ({count:,} event{'s' if count != 1 else ''}{shown}) "
                    f"{line.story_line_id[:8]}",
                    "dim",
                ),
            )
        )
        for event_id in line.event_ids:
            if event_id in events:
                lines.extend(_event_lines(events[event_id], names, indent + "  "))
        for child in children.get(line.story_line_id, []):
            walk(child, depth + 1)

    for line in children.get(None, []):
        walk(line, 0)
    loose = [event for event in view.events if not event.story_line_ids]
    if loose:
        lines.append(_heading("Events outside any story line"))
        for event in loose:
            lines.extend(_event_lines(event, names, "  "))
    if not view.events:
        lines.append(_heading("No events"))
    return lines


def _event_lines(event: EventView, names: dict[str, str], indent: str) -> list[Text]:
    first = Text.assemble(
        indent,
        (when(event.occurred_at), "dim"),
        "  ",
        (f"{event.kind:<15}", "cyan"),
        " ",
        one_line(event.title, 90),
        "  ",
        (event.outcome, _OUTCOME_STYLE.get(event.outcome, "")),
    )
    involved = [names[e] for e in event.entity_ids if e in names]
    if not involved:
        return [first]
    return [first, Text(f"{indent}{' ' * 18}↳ {', '.join(involved)}", "dim")]


def _entities(view: GraphView) -> list[Text]:
    if not view.entities and not view.totals.entities:
        return []
    lines = [_heading(f"Entities ({_count(len(view.entities), view.totals.entities)})")]
    for entity in view.entities:
        lines.append(
            Text.assemble(
                "  ",
                (entity.entity_id[:12], "dim"),
                "  ",
                (f"{entity.kind:<10}", "cyan"),
                " ",
                entity.name,
                "  ",
                (entity.state, _STATE_STYLE.get(entity.state, "")),
                (f" — {one_line(entity.description, 80)}" if entity.description else "", "dim"),
            )
        )
    return lines


def _relations(view: GraphView, names: dict[str, str]) -> list[Text]:
    if not view.relations and not view.totals.relations:
        return []
    lines = [_heading(f"Relations ({_count(len(view.relations), view.totals.relations)})")]
    for relation in view.relations:
        lines.append(
            Text.assemble(
                "  ",
                (relation.relation_id[:12], "dim"),
                "  ",
                names.get(relation.from_entity_id, relation.from_entity_id[:12]),
                (f" —{relation.type}→ ", "cyan"),
                names.get(relation.to_entity_id, relation.to_entity_id[:12]),
                f": {one_line(relation.reason, 100)}  ",
                (relation.state, _STATE_STYLE.get(relation.state, "")),
            )
        )
    return lines


def _changes(view: GraphView, names: dict[str, str]) -> list[Text]:
    if not view.changes and not view.totals.changes:
        return []
    lines = [_heading(f"Changes ({_count(len(view.changes), view.totals.changes)})")]
    for change in view.changes:
        lines.append(
            Text.assemble(
                "  ",
                (change.change_id[:12], "dim"),
                "  ",
                names.get(change.entity_id, change.entity_id[:12]),
                (f" {change.kind}", "cyan"),
                f": {one_line(change.description, 100)}  ",
                (change.state, _STATE_STYLE.get(change.state, "")),
            )
        )
    return lines


def _result_json(result: ResultSummary) -> dict[str, Any]:
    data = dataclasses.asdict(result)
    data["is_global"] = result.is_global
    data["scope_label"] = result.scope_label
    return data


def _view_json(view: GraphView) -> dict[str, Any]:
    parts = ("events", "entities", "relations", "changes", "open_items", "story_lines")
    return {
        "result": _result_json(view.result),
        "story_line_id": view.story_line_id,
        "as_published": view.as_published,
        **{name: [dataclasses.asdict(item) for item in getattr(view, name)] for name in parts},
        "experiences": [dataclasses.asdict(item) for item in view.experiences],
        "totals": dataclasses.asdict(view.totals),
        "limit": view.limit,
        "offset": view.offset,
        "truncated": view.truncated,
        "sources": [dataclasses.asdict(excerpt) for excerpt in view.sources.values()],
    }


# --- a person's edits (REV-4) --------------------------------------------------------------


_FuncT = TypeVar("_FuncT", bound=Callable[..., Any])


def _type_option() -> Callable[[_FuncT], _FuncT]:
    return click.option(
        "--type",
        "object_type",
        type=click.Choice(list(_TYPES)),
        help="What OBJECT_ID is (default: whichever kind the id names).",
    )


def _print_edit(edit: GraphEdit) -> None:
    after = edit.after or {}
    label = after.get("name") or after.get("reason") or after.get("description") or ""
    console.print(
        Text.assemble(
            f"{edit.object_type.replace('_', ' ')} ",
            (edit.object_id[:12], "bold"),
            f" → {after.get('state', edit.action)}",
            f": {one_line(str(label), 100)}" if label else "",
        )
    )


def _target(store: Any, ref: str, object_type: str | None) -> tuple[str, str]:
    kind = None if object_type is None else _TYPES[object_type]
    resolved: tuple[str, str] = store.resolve_graph_object(ref, kind)
    return resolved


@graph.command("confirm")
@click.argument("object_id")
@_type_option()
def confirm_command(object_id: str, object_type: str | None) -> None:
    """Confirm an entity, relation or change: later reviews will not change it."""
    with writable_store() as store:
        kind, full_id = _target(store, object_id, object_type)
        _print_edit(store.confirm(kind, full_id))


@graph.command("revise")
@click.argument("object_id")
@_type_option()
@click.option("--name", help="New name (entities).")
@click.option("--description", help="New description (entities, changes).")
@click.option("--reason", help="New reason (relations).")
@click.option("--kind", help="New kind (entities, changes).")
def revise_command(
    object_id: str,
    object_type: str | None,
    name: str | None,
    description: str | None,
    reason: str | None,
    kind: str | None,
) -> None:
    """Correct an entity, relation or change: later reviews keep your version."""
    with writable_store() as store:
        found_type, full_id = _target(store, object_id, object_type)
        edit = store.revise(
            found_type, full_id, name=name, description=description, reason=reason, kind=kind
        )
        _print_edit(edit)


@graph.command("remove")
@click.argument("object_id")
@_type_option()
def remove_command(object_id: str, object_type: str | None) -> None:
    """Remove an entity or change, or revoke a relation: later reviews never bring it back."""
    with writable_store() as store:
        kind, full_id = _target(store, object_id, object_type)
        _print_edit(store.remove(kind, full_id))


@graph.command("needs-review")
@click.option("--all", "show_all", is_flag=True, help="Dismissed items too.")
@json_option()
def needs_review_command(show_all: bool, as_json: bool) -> None:
    """List where a review proposed something other than your edit (never applied)."""
    with readable_store() as store:
        items = store.needs_review_items(None if show_all else "open")
    if as_json:
        print_json([dataclasses.asdict(item) for item in items])
        return
    if not items:
        console.print("Nothing needs review.")
        return
    for line in _needs_review_lines(items):
        console.print(line)


def _needs_review_lines(items: Iterable[NeedsReviewItem]) -> list[Text]:
    lines = []
    for item in items:
        current = dict(item.current or {})
        differences = [
            f"{key}: {one_line(str(current.get(key, '—')), 60)!r} → {one_line(str(value), 60)!r}"
            for key, value in item.proposed.items()
            if current.get(key) != value
        ]
        lines.append(
            Text.assemble(
                (f"#{item.item_id}", "bold"),
                f" {item.object_type.replace('_', ' ')} ",
                (item.object_id[:12], "bold"),
                (f" ({current.get('state', 'gone')})", "dim"),
                f" {'; '.join(differences) or 'same as now'}",
                (f"  result {item.result_id[:12]} · {item.status}", "dim"),
            )
        )
    return lines


@graph.command("dismiss")
@click.argument("item_id", type=int)
def dismiss_command(item_id: int) -> None:
    """Dismiss a needs-review item (ITEM_ID as `needs-review` shows it, without #)."""
    with writable_store() as store:
        item = store.dismiss_needs_review(item_id)
    console.print(f"#{item.item_id} dismissed", markup=False)


# `graph continue` (UI-5) lives in its own module; registered here so it reads as a graph verb.
from proctor.cli.discussion import continue_command  # noqa: E402

graph.add_command(continue_command)
