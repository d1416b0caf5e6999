"""Properties of publishing that must hold for any sequence of runs and edits (REV-3, REV-4).

Each example works on a fresh copy of one migrated SQLite file holding a conversation, so
hundreds of runs cost milliseconds each.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from proctor.graph import Coverage, EntityFact, RelationFact, ResultDraft
from proctor.store import SqlStore, open_store
from proctor.store import _schema as t
from proctor.store._engine import create_sqlite_engine
from tests.store.graph_drafts import add_conversation, add_run, digest, message

CONVERSATION = "test:conv-1"
ENTITY_IDS = ("entity-a", "entity-b", "entity-c", "entity-d")
NAMES = ("app.py", "Rounding")
"""Fewer names than ids: names collide all the time, identities must not."""
PROPERTY_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A migrated database holding one conversation, and its project id."""
    path = tmp_path_factory.mktemp("graph-template") / "template.db"
    store = open_store(path)
    project_id = add_conversation(store, CONVERSATION)
    store.close()
    with sqlite3.connect(path) as connection:  # fold the WAL in: the copy is one file
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path, project_id


@contextmanager
def fresh_store(template: tuple[Path, str]) -> Iterator[SqlStore]:
    """A store on a private copy of the template."""
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


Proposal = tuple[list[tuple[str, str, str]], list[tuple[int, int, str, str]]]
"""Entities (id, name, description) and relations (from, to: indexes into ``ENTITY_IDS``;
type; reason). Relations run between the first two ids so runs keep re-proposing them."""

entities = st.lists(
    st.tuples(st.sampled_from(ENTITY_IDS), st.sampled_from(NAMES), st.sampled_from(("d1", "d2"))),
    min_size=1,
    max_size=5,
)
relations = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.integers(0, 1),
        st.sampled_from(("uses", "relates_to")),
        st.sampled_from(("r1", "r2")),
    ),
    max_size=4,
)
proposals = st.tuples(entities, relations)
edits = st.tuples(
    st.sampled_from(("confirm", "revise", "remove")),
    st.sampled_from(("entity", "relation")),
    st.integers(0, 50),
    st.sampled_from(("user-1", "user-2")),
)
steps = st.lists(
    st.one_of(st.tuples(st.just("publish"), proposals), st.tuples(st.just("edit"), edits)),
    min_size=1,
    max_size=8,
)


def draft_of(run_id: str, project_id: str, proposal: Proposal) -> ResultDraft:
    """A semantic-layer draft proposing these entities and relations."""
    cited = (message(CONVERSATION, 0),)
    facts = tuple(
        EntityFact(entity_id, project_id, "concept", name, description, cited, "semantic")
        for entity_id, name, description in proposal[0]
    )
    ends = {ENTITY_IDS[i] for a, b, _, _ in proposal[1] for i in (a, b)}
    facts += tuple(
        EntityFact(entity_id, project_id, "concept", NAMES[0], "d1", cited, "semantic")
        for entity_id in sorted(ends - {fact.entity_id for fact in facts})
    )
    links = tuple(
        RelationFact(
            ENTITY_IDS[a],
            ENTITY_IDS[b],
            kind,
            reason,
            cited,
            "semantic",
        )
        for a, b, kind, reason in proposal[1]
    )
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
        entities=facts,
        relations=links,
    )


def publish(store: SqlStore, project_id: str, proposal: Proposal) -> ResultDraft:
    run_id = str(uuid.uuid4())
    add_run(store, run_id, project_id)
    draft = draft_of(run_id, project_id, proposal)
    assert store.publish_result(draft, "completed").published
    return draft


def rows(store: SqlStore, table: Any, key: str) -> dict[str, dict[str, Any]]:
    with store._read() as c:
        return {row[key]: dict(row) for row in c.execute(select(table)).mappings()}


def user_fields(row: dict[str, Any], object_type: str) -> dict[str, Any]:
    names = ("name", "description", "kind") if object_type == "entity" else ("reason",)
    return {name: row[name] for name in (*names, "state")}


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(history=st.lists(proposals, min_size=1, max_size=4), again=proposals)
def test_publishing_a_run_twice_changes_nothing(
    template: tuple[Path, str], history: list[Proposal], again: Proposal
) -> None:
    project_id = template[1]
    with fresh_store(template) as store:
        for proposal in history:
            draft = publish(store, project_id, proposal)
            before = digest(store)
            first = store.graph(draft.result_id)

            repeat = store.publish_result(draft, "failed")
            other = store.publish_result(draft_of(draft.run_id, project_id, again), "failed")

            assert not repeat.published and not other.published
            assert repeat.result_id == other.result_id == draft.result_id
            assert digest(store) == before
            assert store.graph(draft.result_id) == first


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(history=steps)
def test_user_edits_survive_any_sequence_of_automatic_runs(
    template: tuple[Path, str], history: list[tuple[str, Any]]
) -> None:
    project_id = template[1]
    protected: dict[tuple[str, str], dict[str, Any]] = {}
    revoked: set[str] = set()
    with fresh_store(template) as store:
        for kind, step in history:
            if kind == "publish":
                draft = publish(store, project_id, step)
                published = {r.relation_id for r in store.graph(draft.result_id).relations}
                assert not published & revoked, "a revoked relation came back"
            else:
                action, object_type, index, text = step
                table, key = (
                    (t.entities, "entity_id")
                    if object_type == "entity"
                    else (t.relations, "relation_id")
                )
                candidates = sorted(rows(store, table, key))
                if not candidates:
                    continue
                object_id = candidates[index % len(candidates)]
                if action == "confirm":
                    edit = store.confirm(object_type, object_id)
                elif action == "revise" and object_type == "entity":
                    edit = store.revise(object_type, object_id, name=text)
                elif action == "revise":
                    edit = store.revise(object_type, object_id, reason=text)
                else:
                    edit = store.remove(object_type, object_id)
                assert edit.after is not None
                protected[(object_type, object_id)] = dict(edit.after)
                if object_type == "relation":
                    if edit.after["state"] == "revoked":
                        revoked.add(object_id)
                    else:
                        revoked.discard(object_id)
            now = {
                "entity": rows(store, t.entities, "entity_id"),
                "relation": rows(store, t.relations, "relation_id"),
            }
            for (object_type, object_id), fields in protected.items():
                assert user_fields(now[object_type][object_id], object_type) == fields


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(history=st.lists(entities, min_size=1, max_size=4))
def test_identity_never_follows_names(
    template: tuple[Path, str], history: list[list[tuple[str, str, str]]]
) -> None:
    project_id = template[1]
    with fresh_store(template) as store:
        latest: dict[str, str] = {}
        for proposal in history:
            publish(store, project_id, (proposal, []))
            for entity_id, name, _ in proposal:
                latest[entity_id] = name
            stored = rows(store, t.entities, "entity_id")
            assert set(stored) == set(latest), "one row per identity, never one per name"
            assert {i: row["name"] for i, row in stored.items()} == latest
