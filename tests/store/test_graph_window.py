"""Bounded graph reads (REV-12, issue 5): a window of a large result's events, one story line,
totals of what was left out; read with indexes, in set-based queries, one snapshot.

The current graph is read in SQL (``_graph_window``) and a result's snapshot in Python
(``_graph_snapshot``); a freshly published result must read the same both ways, for any
story line, limit and offset.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, select, update

from proctor.errors import NotFoundError
from proctor.graph import (
    Coverage,
    EntityChangeFact,
    EntityFact,
    EventFact,
    ExperienceFact,
    OpenItemFact,
    RelationFact,
    ResultDraft,
    SourceRef,
    StoryLineFact,
)
from proctor.graph.views import GRAPH_LIMIT, SOURCES_PER_OBJECT, GraphView
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from proctor.store._engine import create_sqlite_engine
from tests.builders import T0
from tests.store.graph_drafts import add_conversation, add_run, message

CONVERSATION = "test:conv-1"
ENTITIES = tuple(f"entity-{i}" for i in range(6))
GRAPH_TABLES = (
    "entities",
    "graph_events",
    "event_entities",
    "entity_changes",
    "relations",
    "open_items",
    "story_lines",
    "story_line_events",
    "experiences",
    "experience_events",
    "source_refs",
    "result_objects",
    "results",
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A migrated database holding one conversation, and its project id."""
    path = tmp_path_factory.mktemp("window-template") / "template.db"
    store = open_store(path)
    project_id = add_conversation(store, CONVERSATION)
    store.close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path, project_id


@contextmanager
def fresh_store(template: tuple[Path, str]) -> Iterator[SqlStore]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "proctor.db"
        shutil.copy(template[0], path)
        store = SqlStore(
            create_sqlite_engine(path),
            create_sqlite_engine(path, read_only=True),
            description=str(path),
        )
        try:
            yield store
        finally:
            store.close()


@pytest.fixture
def project_id(store: SqlStore) -> str:
    """The project of a stored conversation, in the store of each backend (conftest)."""
    return add_conversation(store, CONVERSATION)


def cite(index: int) -> SourceRef:
    """A distinct reference to the conversation's first message (so no source is missing)."""
    return dataclasses.replace(message(CONVERSATION, 0), start=index, end=index + 1)


def entity(entity_id: str, project_id: str, refs: int = 1) -> EntityFact:
    return EntityFact(
        entity_id,
        project_id,
        "file",
        f"src/{entity_id}.py",
        "",
        tuple(cite(1000 + i) for i in range(refs)),
        "structural",
        f"src/{entity_id}.py",
    )


def publish(store: SqlStore, draft: ResultDraft) -> ResultDraft:
    add_run(store, draft.run_id, draft.project_id)
    assert store.publish_result(draft, "completed").published
    return draft


def draft(project_id: str, **facts: Any) -> ResultDraft:
    run_id = str(uuid.uuid4())
    return ResultDraft(
        result_id=str(uuid.uuid4()),
        run_id=run_id,
        scope_key=f"project:{project_id}",
        project_id=project_id,
        time_from=None,
        time_to=None,
        trigger="manual",
        summary="",
        change_digest="",
        coverage=Coverage(1, 1, 0),
        **facts,
    )


def timeline(project_id: str, n: int) -> ResultDraft:
    """``n`` events a minute apart, event ``i`` involving entity ``i % 6``; relations
    ``0→1``, ``2→3``, ``4→5``; two story lines: even and odd events."""
    events = tuple(
        EventFact(
            f"event-{i:03d}",
            project_id,
            "command",
            f"step {i}",
            "",
            T0 + timedelta(minutes=i),
            CONVERSATION,
            (cite(i),),
            "structural",
            (ENTITIES[i % 6],),
            "ok",
        )
        for i in range(n)
    )
    return draft(
        project_id,
        entities=tuple(entity(e, project_id) for e in ENTITIES),
        events=events,
        relations=tuple(
            RelationFact(ENTITIES[a], ENTITIES[a + 1], "uses", "r", (cite(500 + a),), "structural")
            for a in (0, 2, 4)
        ),
        story_lines=(
            StoryLineFact("even", "Even", "", tuple(e.event_id for e in events[::2]), None),
            StoryLineFact("odd", "Odd", "", tuple(e.event_id for e in events[1::2]), None),
        ),
    )


def titles(view: GraphView) -> list[str]:
    return [e.title for e in view.events]


# --- windows ------------------------------------------------------------------------------


def test_a_large_result_shows_its_newest_events_with_what_they_involve_and_counts_the_rest(
    store: SqlStore, project_id: str
) -> None:
    result = publish(store, timeline(project_id, 30))

    view = store.graph(result.result_id, limit=4)

    assert titles(view) == ["step 26", "step 27", "step 28", "step 29"]
    assert view.truncated and (view.limit, view.offset) == (4, 0)
    assert (view.totals.events, view.totals.entities, view.totals.relations) == (30, 6, 3)
    assert view.totals.story_lines == 2
    # Entities 2, 3, 4, 5 are involved; of the relations, 2→3 and 4→5 join two of them.
    assert [e.entity_id for e in view.entities] == list(ENTITIES[2:])
    assert [(r.from_entity_id, r.to_entity_id) for r in view.relations] == [
        ("entity-2", "entity-3"),
        ("entity-4", "entity-5"),
    ]
    even = next(line for line in view.story_lines if line.title == "Even")
    assert even.event_ids == ("event-026", "event-028") and even.event_count == 15
    assert even.first_at == T0 and even.last_at == T0 + timedelta(minutes=28)
    assert {key[1] for key in view.sources} == {CONVERSATION + ":m0"}


def test_pages_by_offset_cover_every_event_once_from_the_newest_back(
    store: SqlStore, project_id: str
) -> None:
    result = publish(store, timeline(project_id, 25))

    pages = [store.graph(result.result_id, limit=10, offset=offset) for offset in (0, 10, 20, 30)]

    assert [len(page.events) for page in pages] == [10, 10, 5, 0]
    assert titles(pages[2]) + titles(pages[1]) + titles(pages[0]) == [
        f"step {i}" for i in range(25)
    ]
    assert pages[3].truncated and not pages[3].entities and not pages[3].story_lines
    everything = store.graph(result.result_id, limit=None)
    assert titles(everything) == titles(pages[2]) + titles(pages[1]) + titles(pages[0])


def test_a_result_that_fits_is_shown_whole(store: SqlStore, project_id: str) -> None:
    lonely = entity("lonely", project_id)  # involved in no event: shown while all fits
    result = publish(
        store,
        dataclasses.replace(
            timeline(project_id, 12),
            entities=(*timeline(project_id, 12).entities, lonely),
        ),
    )

    view = store.graph(result.result_id)

    assert view.limit == GRAPH_LIMIT and not view.truncated
    assert len(view.events) == view.totals.events == 12
    assert "lonely" in {e.entity_id for e in view.entities}
    for limit in (12, None):
        assert dataclasses.replace(view, limit=limit) == store.graph(result.result_id, limit=limit)
    assert "lonely" not in {e.entity_id for e in store.graph(result.result_id, limit=11).entities}


def test_a_story_line_window_holds_only_that_lines_events_and_counts_the_line(
    store: SqlStore, project_id: str
) -> None:
    result = publish(store, timeline(project_id, 30))
    odd = next(line for line in store.graph(result.result_id).story_lines if line.title == "Odd")

    whole = store.graph(result.result_id, odd.story_line_id[:8], limit=None)
    window = store.graph(result.result_id, odd.story_line_id, limit=3, offset=1)

    assert len(whole.events) == 15 and not whole.truncated
    assert {e.entity_id for e in whole.entities} == {"entity-1", "entity-3", "entity-5"}
    assert not whole.relations  # no relation joins two odd entities
    assert titles(window) == ["step 23", "step 25", "step 27"]
    assert window.story_line_id == odd.story_line_id
    assert (window.totals.events, window.totals.entities, window.totals.story_lines) == (15, 3, 1)
    [line] = window.story_lines
    assert line.event_ids == ("event-023", "event-025", "event-027") and line.event_count == 15


def test_a_bad_id_limit_or_offset_is_refused(store: SqlStore, project_id: str) -> None:
    result = publish(store, timeline(project_id, 3))
    with pytest.raises(ValueError, match="limit must be at least 1"):
        store.graph(result.result_id, limit=0)
    with pytest.raises(ValueError, match="offset must not be negative"):
        store.graph(result.result_id, offset=-1)
    with pytest.raises(NotFoundError):
        store.graph(result.result_id, "no-such-line", limit=1)
    with pytest.raises(NotFoundError):
        store.graph("no-such-result", limit=1)


def test_an_object_keeps_its_first_sources_and_counts_them_all(
    store: SqlStore, project_id: str
) -> None:
    busy = entity("entity-0", project_id, refs=SOURCES_PER_OBJECT + 7)
    base = timeline(project_id, 8)
    result = publish(store, dataclasses.replace(base, entities=(busy, *base.entities[1:])))

    for view in (
        store.graph(result.result_id),  # whole
        store.graph(result.result_id, limit=2, offset=6),  # a window holding event 0
        store.graph(result.result_id, as_published=True),
    ):
        shown = next(e for e in view.entities if e.entity_id == "entity-0")
        assert shown.sources == busy.sources[:SOURCES_PER_OBJECT]
        assert shown.source_count == SOURCES_PER_OBJECT + 7


# --- as published, and the two readers agree ---------------------------------------------


def test_as_published_is_bounded_like_a_current_read(store: SqlStore, project_id: str) -> None:
    result = publish(store, timeline(project_id, 30))
    store.revise("entity", "entity-5", name="renamed")

    now = store.graph(result.result_id, limit=4)
    then = store.graph(result.result_id, limit=4, as_published=True)

    assert then.as_published and titles(then) == titles(now) and then.totals == now.totals
    assert {e.name for e in now.entities} - {e.name for e in then.entities} == {"renamed"}


def test_a_snapshot_from_before_the_counts_reads_with_counts_of_what_it_holds(
    store: SqlStore, project_id: str
) -> None:
    result = publish(store, timeline(project_id, 6))
    with store._write() as c:
        snapshot = c.execute(
            select(t.results.c.snapshot).where(t.results.c.result_id == result.result_id)
        ).scalar_one()
        for part in ("events", "entities", "relations", "story_lines"):
            for item in snapshot[part]:
                item.pop("source_count", None)
                item.pop("event_count", None)
        c.execute(
            update(t.results)
            .where(t.results.c.result_id == result.result_id)
            .values(snapshot=snapshot)
        )

    then = store.graph(result.result_id, as_published=True)

    assert [line.event_count for line in then.story_lines] == [3, 3]
    assert {e.source_count for e in then.events} == {1}
    assert then == dataclasses.replace(store.graph(result.result_id), as_published=True)


times = st.one_of(st.none(), st.integers(0, 4).map(lambda m: T0 + timedelta(minutes=m)))
graphs = st.fixed_dictionaries(
    {
        "events": st.lists(
            st.tuples(times, st.sets(st.sampled_from(ENTITIES), max_size=3), st.integers(1, 3)),
            min_size=1,
            max_size=14,
        ),
        "published": st.sets(st.sampled_from(ENTITIES), min_size=1),
        "refs": st.integers(1, SOURCES_PER_OBJECT + 3),
        "relations": st.sets(st.tuples(st.sampled_from(ENTITIES), st.sampled_from(ENTITIES))),
        "changes": st.lists(st.sampled_from(ENTITIES), max_size=3),
        "open_items": st.lists(st.sets(st.sampled_from(ENTITIES), max_size=2), max_size=3),
        "lines": st.lists(
            st.tuples(st.sets(st.integers(0, 13)), st.integers(-1, 3)), min_size=1, max_size=4
        ),
        "experiences": st.lists(st.sets(st.integers(0, 13), min_size=1), max_size=2),
    }
)
reads = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 3)),
        st.one_of(st.none(), st.integers(1, 15)),
        st.integers(0, 16),
    ),
    min_size=1,
    max_size=6,
)


def generated(project_id: str, g: dict[str, Any]) -> tuple[ResultDraft, ResultDraft]:
    """A first result holding every entity, and one publishing part of them with events,
    relations, changes, open items, story lines (sub-threads too) and experiences."""
    first = draft(project_id, entities=tuple(entity(e, project_id) for e in ENTITIES))
    events = tuple(
        EventFact(
            f"event-{i:02d}",
            project_id,
            "command",
            f"step {i}",
            "",
            at,
            CONVERSATION,
            tuple(cite(10 * i + k) for k in range(refs)),
            "structural",
            tuple(sorted(linked)),
            "ok",
        )
        for i, (at, linked, refs) in enumerate(g["events"])
    )
    ids = [e.event_id for e in events]
    lines = tuple(
        StoryLineFact(
            f"line-{k}",
            f"Line {k}",
            "",
            tuple(ids[i] for i in sorted(members) if i < len(ids)),
            None,
            parent_key=f"line-{parent}" if 0 <= parent < k else None,
            must_exist=False,
        )
        for k, (members, parent) in enumerate(g["lines"])
    )
    second = draft(
        project_id,
        entities=tuple(entity(e, project_id, g["refs"]) for e in sorted(g["published"])),
        events=events,
        relations=tuple(
            RelationFact(a, b, "uses", "r", (cite(900),), "structural")
            for a, b in sorted(g["relations"])
        ),
        changes=tuple(
            EntityChangeFact(e, "revised", "d", (cite(901),), "structural") for e in g["changes"]
        ),
        open_items=tuple(
            OpenItemFact(f"item-{k}", project_id, "t", "", (cite(902),), "structural", tuple(ents))
            for k, ents in enumerate(g["open_items"])
        ),
        story_lines=lines,
        experiences=tuple(
            ExperienceFact(f"x{k}", "", tuple(ids[i] for i in sorted(members) if i < len(ids)))
            for k, members in enumerate(g["experiences"])
        ),
    )
    return first, second


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(g=graphs, asks=reads)
def test_a_current_read_and_the_snapshot_agree_for_any_line_limit_and_offset(
    template: tuple[Path, str], g: dict[str, Any], asks: list[tuple[int | None, int | None, int]]
) -> None:
    with fresh_store(template) as store:
        first, second = generated(template[1], g)
        publish(store, first)
        result = publish(store, second)
        lines = store.graph(result.result_id, limit=None).story_lines
        for line, limit, offset in asks:
            line_id = None if line is None or line >= len(lines) else lines[line].story_line_id
            now = store.graph(result.result_id, line_id, limit=limit, offset=offset)
            then = store.graph(
                result.result_id, line_id, limit=limit, offset=offset, as_published=True
            )
            assert now == dataclasses.replace(then, as_published=False), (line_id, limit, offset)
            assert len(now.events) <= (limit or len(now.events))
            assert now.totals.events >= len(now.events)


# --- how it is read ----------------------------------------------------------------------------


@contextmanager
def statements(store: SqlStore) -> Iterator[list[tuple[str, Any]]]:
    """Every statement the store's reader runs meanwhile, with its parameters."""
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cursor: Any, sql: str, params: Any, _ctx: Any, _many: bool) -> None:
        seen.append((sql, params))

    engine = store._reader
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_every_graph_read_finds_its_rows_through_indexes(template: tuple[Path, str]) -> None:
    """SQLite's plan of each statement: no full scan of a graph table (PostgreSQL plans by
    its statistics; the same indexes serve it)."""
    with fresh_store(template) as store:
        result = publish(store, timeline(template[1], 40))
        line_id = store.graph(result.result_id).story_lines[0].story_line_id
        with statements(store) as seen:
            store.graph(result.result_id)  # whole
            store.graph(result.result_id, limit=5, offset=3)  # a window
            store.graph(result.result_id, line_id[:8], limit=5)  # a story line
            store.graph(result.result_id, line_id, as_published=True, limit=5)
        scans = set()
        with store._read() as c:
            for sql, params in seen:
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                for row in c.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params):
                    scanned = re.match(r"\s*SCAN (\w+)", row[3])
                    if scanned and scanned.group(1) in GRAPH_TABLES:
                        scans.add((scanned.group(1), sql))
    assert len(seen) > 20 and not scans, scans


def test_a_window_reads_in_the_same_few_queries_however_many_objects_it_shows(
    store: SqlStore, project_id: str
) -> None:
    result = publish(store, timeline(project_id, 450))

    def count(limit: int) -> int:
        with statements(store) as seen:
            view = store.graph(result.result_id, limit=limit, offset=1)
        assert len(view.events) == limit
        return len(seen)

    assert count(3) == count(400)
