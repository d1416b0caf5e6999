"""ING-8 / ING-8b: deleting a conversation leaves no row naming it, in any table.

Every table of the schema is classified here: cleared on delete (and how), kept by design
(published review history, ING-8), or holding no per-conversation data. A table added to
``_schema.metadata`` without a classification fails the first test; a table whose rows do
not match its classification fails the second, which builds a store where every table
holds rows of two conversations (``deletion_world.py``), deletes one and compares every
row of every table before and after.

A row *names* a conversation when any of its values contains the conversation's tag (its
ids, source ids, task ids and every text carry it), or one of the ids of a row that names
it (a supervision run's id in a model-call record), or points by foreign key at such a row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import String, Table, select

from proctor.ingest import ingest
from proctor.search import search
from proctor.store import SqlStore, _deletion
from proctor.store import _schema as t
from proctor.supervision import (
    SessionSettings,
    check_conversations,
    enable_supervision,
    resolve_target,
)
from proctor.testing.scripted_model import ScriptedModelServer
from tests.store.deletion_world import (
    TAGS,
    build_world,
    conversation_id,
    goal_sentence,
    write_conversations,
)

Row = dict[str, Any]
Tables = dict[str, list[Row]]


@dataclass(frozen=True)
class Cleared:
    """Rows naming a deleted conversation go with it."""

    how: str
    keeps: Callable[[Row, Tables], bool] | None = None
    """Rows that stay although they may name it (with ``why`` in ``how``); asked with the
    row and every table's rows at that moment."""


@dataclass(frozen=True)
class Anonymised:
    """Rows stay (their count matters) but lose everything naming the conversation."""

    how: str


@dataclass(frozen=True)
class Kept:
    """Published review history (ING-8): kept as published, citing sources read as gone."""

    why: str


@dataclass(frozen=True)
class NoConversationData:
    """The table never holds anything of one conversation."""

    why: str


Rule = Cleared | Anonymised | Kept | NoConversationData

_PUBLISHED = "published review history keeps its own snapshot (ING-8)"
_GRAPH = "a story graph object published by a review (ING-8); its citations read as gone"

RULES: dict[str, Rule] = {
    "projects": NoConversationData("a project outlives its conversations"),
    "conversations": Cleared("by id, with its sub-agent conversations"),
    "sources": Cleared("foreign key cascade from conversations"),
    "source_versions": Cleared("foreign key cascade from sources"),
    "messages": Cleared("foreign key cascade from conversations"),
    "tool_calls": Cleared("foreign key cascade from conversations"),
    "tasks": Cleared("foreign key cascade from conversations"),
    "task_events": Cleared("foreign key cascade from conversations"),
    "subagent_runs": Cleared("foreign key cascade from conversations"),
    "imports": NoConversationData("the import log: the paths a person gave and counts"),
    "import_issues": NoConversationData("the import log: file, line and reason of a problem"),
    "import_files": Cleared("rows whose conversation_ids list a deleted conversation"),
    "findings": Cleared("foreign key cascade from conversations"),
    "notifications": Cleared("foreign key cascade from findings"),
    "finding_changes": NoConversationData("a bulk triage: its action, status and count"),
    "finding_change_items": Cleared("foreign key cascade from findings"),
    "settings": NoConversationData("global settings (default connection, app switch)"),
    "model_connections": NoConversationData("saved model connections"),
    "model_calls": Cleared("target_id is the conversation or its task, or run_id its run"),
    "supervision_sessions": Cleared("target_id is the conversation or one of its tasks"),
    "supervision_runs": Cleared("target_id is the conversation or one of its tasks"),
    "goal_versions": Cleared("target_id is the conversation or one of its tasks"),
    "intent_labels": Cleared("target_id, or source_id one of its turns"),
    "review_runs": NoConversationData("a run's scope, range and counters"),
    "review_slot": NoConversationData("the execution slot"),
    "review_manifest": Anonymised("entries of its sources lose their ids and read omitted"),
    "review_batches": Kept(f"a run's saved facts: {_PUBLISHED}"),
    "review_checkpoints": Cleared("checkpoints of its sources"),
    "results": Kept(_PUBLISHED),
    "entities": Kept(_GRAPH),
    "graph_events": Kept(_GRAPH),
    "event_entities": Kept(_GRAPH),
    "entity_changes": Kept(_GRAPH),
    "relations": Kept(_GRAPH),
    "open_items": Kept(_GRAPH),
    "story_lines": Kept(_GRAPH),
    "story_line_events": Kept(_GRAPH),
    "experiences": Kept(_GRAPH),
    "experience_events": Kept(_GRAPH),
    "source_refs": Kept("a graph object's citations: they read as gone (ING-8)"),
    "result_objects": Kept(_GRAPH),
    "needs_review": Kept("a difference with a person's edit of a published object"),
    "graph_edits": Kept("what a person did to a published object"),
    "search_documents": Cleared(
        "foreign key cascade from conversations (its messages, tool calls and events); "
        "documents of other graph objects stay with the published graph",
        keeps=lambda row, _tables: _graph_document(row),
    ),
    "search_vectors": Cleared(
        "foreign key cascade from search_documents; the vectors of the graph's documents "
        "stay with them",
        keeps=lambda row, tables: any(
            document["row_id"] == row["row_id"] and _graph_document(document)
            for document in tables["search_documents"]
        ),
    ),
    "search_state": NoConversationData("counts and times of the last index pass"),
    "heartbeat_plans": NoConversationData("a scheduled review's scope and times"),
    "heartbeat_runs": NoConversationData("a plan's firing: status, run and result ids"),
    "suggestions": Kept(f"made from a result's changes: {_PUBLISHED}"),
    "user_tasks": Kept("a task a person took on by accepting a suggestion"),
    "memories": Kept("what a person confirmed to remember"),
    "memory_candidates": Cleared("foreign key cascade from findings"),
    "graph_access": Cleared("foreign key cascade from conversations"),
}

SOURCES = ("message", "tool_call")


def _graph_document(row: Row) -> bool:
    """A search document of a published graph object (kept with the published graph)."""
    return row["conversation_id"] is None and row["doc_type"] not in SOURCES


UNFILLABLE: dict[str, str] = {}
"""Tables the product cannot fill in this world, with the reason (none today)."""


def test_every_table_of_the_schema_is_classified_for_deletion() -> None:
    tables = set(t.metadata.tables)
    unclassified = sorted(tables - set(RULES))
    assert not unclassified, (
        f"tables {unclassified} are not classified for deletion: add each to RULES here, and "
        "if it can name a conversation, clear it in proctor/store/_deletion.py"
    )
    assert sorted(set(RULES) - tables) == [], "RULES names tables the schema no longer has"


def test_a_delete_that_fails_half_way_leaves_everything_as_it_was(
    store: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "import"
    folder.mkdir()
    write_conversations(folder, later=False)
    ingest(store, [folder])
    doomed = conversation_id(TAGS[0])
    check_conversations(store, [doomed])
    target = resolve_target(store, doomed)
    enable_supervision(store, target, SessionSettings(mode="goal"), now=datetime.now().astimezone())
    store.set_graph_access(doomed, True)
    before = _all_rows(store)

    def refuse(*_args: object) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(_deletion, "_forget_imported_files", refuse)
    with pytest.raises(RuntimeError, match="the disk is full"):
        store.delete_conversation(doomed)

    assert _all_rows(store) == before
    assert store.supervision_session(doomed) is not None and store.graph_access(doomed)


# -- reading every row -------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return value


def _all_rows(store: SqlStore) -> dict[str, list[Row]]:
    with store._read() as c:
        return {
            name: [
                {str(key): _plain(value) for key, value in row._mapping.items()}
                for row in c.execute(select(table))
            ]
            for name, table in t.metadata.tables.items()
        }


def _text(row: Row) -> str:
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode().lower()


def _key(row: Row) -> str:
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode()


def _string_id(table: Table) -> str | None:
    """The single string primary key column of a table, if it has one."""
    keys = list(table.primary_key.columns)
    if len(keys) == 1 and isinstance(keys[0].type, String):
        return keys[0].name
    return None


def _foreign_keys() -> Iterator[tuple[str, tuple[str, ...], str, tuple[str, ...]]]:
    """(child table, its columns, parent table, the parent's columns) of every foreign key."""
    for name, table in t.metadata.tables.items():
        for constraint in table.foreign_key_constraints:
            parent = constraint.referred_table.name
            columns = tuple(element.parent.name for element in constraint.elements)
            referred = tuple(element.column.name for element in constraint.elements)
            yield name, columns, parent, referred


def naming(rows: dict[str, list[Row]], tag: str) -> dict[str, list[Row]]:
    """Rows of every table that name the conversation tagged ``tag`` (module docstring).

    Ids spread only from cleared or anonymised tables: a published result names both
    conversations, and its id is no id of either.
    """
    needles = {tag}
    texts = {name: [_text(r) for r in table] for name, table in rows.items()}
    while True:
        found = {
            name: [
                r
                for r, text in zip(table, texts[name], strict=True)
                if any(n in text for n in needles)
            ]
            for name, table in rows.items()
        }
        for child, columns, parent, referred in _foreign_keys():
            values = {tuple(r[c] for c in referred) for r in found[parent]}
            linked = [
                r
                for r in rows[child]
                if tuple(r[c] for c in columns) in values and r not in found[child]
            ]
            found[child].extend(linked)
        spread = set(needles)
        for name, named in found.items():
            key = _string_id(t.metadata.tables[name])
            if key is not None and isinstance(RULES[name], Cleared | Anonymised):
                spread.update(str(r[key]).lower() for r in named if len(str(r[key])) >= 8)
        if spread == needles:
            return found
        needles = spread


def _kept_by_rule(name: str, row: Row, tables: Tables) -> bool:
    rule = RULES[name]
    return isinstance(rule, Cleared) and rule.keeps is not None and rule.keeps(row, tables)


# -- the world ---------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    from tests.store.deletion_world import answer

    with ScriptedModelServer(responder=answer) as running:
        yield running


@pytest.mark.slow
def test_deleting_a_conversation_leaves_no_row_naming_it_and_every_row_of_the_other(
    store: SqlStore, server: ScriptedModelServer, tmp_path: Path
) -> None:
    world = build_world(store, server, tmp_path / "import")
    doomed, other = TAGS
    before = _all_rows(store)
    empty = sorted(name for name, rows in before.items() if not rows and name not in UNFILLABLE)
    assert not empty, f"the world left tables {empty} empty: fill them or list them in UNFILLABLE"
    named_before = {tag: naming(before, tag) for tag in TAGS}
    for name, rule in RULES.items():
        for tag in TAGS:
            named = [r for r in named_before[tag][name] if not _kept_by_rule(name, r, before)]
            if isinstance(rule, NoConversationData):
                assert not named, f"{name} ({rule.why}) holds rows naming {tag}: {named[:2]}"
            elif isinstance(rule, Cleared | Anonymised):
                assert named, f"the world holds no row of {name} naming {tag}"

    deleted = store.delete_conversation(conversation_id(doomed))

    assert sorted(deleted) == sorted(world.conversations[doomed])
    after = _all_rows(store)
    named_after = naming(after, doomed)
    for name, rule in RULES.items():
        before_keys = sorted(_key(r) for r in before[name])
        after_keys = sorted(_key(r) for r in after[name])
        if isinstance(rule, Kept):
            assert after_keys == before_keys, f"{name} ({rule.why}) changed on delete"
            continue
        leaks = [r for r in named_after[name] if not _kept_by_rule(name, r, after)]
        assert not leaks, f"{name} still names the deleted conversation: {leaks[:2]}"
        kept = [r for r in before[name] if _kept_by_rule(name, r, before)]
        survivors = {_key(r) for r in after[name]}
        assert all(_key(r) in survivors for r in kept), f"{name} lost rows it keeps"
        others = [r for r in named_before[other][name] if _key(r) in before_keys]
        if isinstance(rule, Anonymised):
            assert len(after[name]) == len(before[name]), f"{name} lost rows"
        if isinstance(rule, Cleared | Anonymised):
            missing = [r for r in others if _key(r) not in survivors]
            assert not missing, f"{name} lost rows of the other conversation: {missing[:2]}"

    gone, stays = conversation_id(doomed), conversation_id(other)
    assert store.goal_versions(gone) == [] and store.intent_labels(gone) == []
    assert store.supervision_session(gone) is None
    assert goal_sentence(other) in [v.goal for v in store.goal_versions(stays)]
    assert store.supervision_session(stays) is not None
    words = search(store, doomed, limit=50, encoder=None)
    assert [h.doc_id for h in words.hits if h.doc_type in SOURCES] == []
    hybrid = search(store, f"{doomed} ledger", limit=50)
    assert not {h.conversation_id for h in hybrid.hits} & set(deleted)
    kept = search(store, other, limit=50, encoder=None)
    assert any(h.doc_type == "message" for h in kept.hits)
