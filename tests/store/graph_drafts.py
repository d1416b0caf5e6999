"""Builders for story-graph tests: review runs, stored conversations and result drafts.

The drafts are built directly from the fact types (``proctor.graph``), the way the review
pipeline hands them to ``publish_result``; no pipeline is involved.
"""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select

from proctor.graph import (
    Checkpoint,
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
    structural_entity_id,
    structural_event_id,
)
from proctor.sources import prepare_bundle
from proctor.store import SqlStore
from proctor.store import _schema as t
from tests.builders import T0, conversation_bundle

PROJECT = "invoice-service"
GRAPH_TABLES = (
    "results",
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
    "needs_review",
    "graph_edits",
    "review_checkpoints",
    "review_runs",
)
_TIME_COLUMNS = {"created_at", "updated_at", "finished_at"}


def add_conversation(store: SqlStore, conversation_id: str = "test:conv-1") -> str:
    """Store a small conversation (3 messages, a failing ``pytest -q``); its project's id."""
    store.write_conversation(prepare_bundle(conversation_bundle(conversation_id)))
    return next(p.project_id for p in store.projects() if p.name == PROJECT)


def add_run(store: SqlStore, run_id: str, project_id: str | None) -> None:
    """A review run row, as the review store creates it before anything is published."""
    now = datetime.now(UTC)
    with store._write() as c:
        c.execute(
            insert(t.review_runs).values(
                run_id=run_id,
                scope_key="all" if project_id is None else f"project:{project_id}",
                project_id=project_id,
                trigger="manual",
                reanalyze=False,
                status="running",
                active=True,
                options={},
                sources_total=0,
                sources_done=0,
                batches_total=0,
                batches_done=0,
                model_calls=0,
                input_tokens=0,
                output_tokens=0,
                created_at=now,
                updated_at=now,
            )
        )


def message(conversation_id: str, index: int) -> SourceRef:
    return SourceRef("message", f"{conversation_id}:m{index}", "text")


def tool_call(conversation_id: str) -> SourceRef:
    return SourceRef("tool_call", f"{conversation_id}:call-1", "result_text", 0, 8)


def line_id(conversation_id: str) -> str:
    """The deterministic story line of a conversation."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"story-line:{conversation_id}"))


def sample_draft(
    run_id: str,
    project_id: str | None,
    *,
    conversation_id: str = "test:conv-1",
    result_id: str | None = None,
    file_description: str = "The invoice rounding module",
    reason: str = "pytest -q runs the tests of app.py",
) -> ResultDraft:
    """A small structural + semantic graph over the conversation of :func:`add_conversation`."""
    cid = conversation_id
    project = project_id or "none"
    file_id = structural_entity_id(project, "file", "src/app.py")
    command_id = structural_entity_id(project, "command", "pytest -q")
    concept_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"concept:{cid}"))
    run_event = structural_event_id("command", "tool_call", f"{cid}:call-1")
    talk_event = str(uuid.uuid5(uuid.NAMESPACE_URL, f"talk:{cid}"))
    entities = (
        EntityFact(
            file_id,
            project,
            "file",
            "src/app.py",
            file_description,
            (message(cid, 0),),
            "structural",
            "src/app.py",
        ),
        EntityFact(
            command_id,
            project,
            "command",
            "pytest -q",
            "Runs the test suite",
            (tool_call(cid),),
            "structural",
            "pytest -q",
        ),
        EntityFact(
            concept_id,
            project,
            "concept",
            "Half-up rounding",
            "Invoices round half up",
            (message(cid, 1),),
            "semantic",
        ),
    )
    events = (
        EventFact(
            run_event,
            project,
            "command",
            "pytest -q",
            "1 failed, 3 passed",
            T0 + timedelta(minutes=1),
            cid,
            (tool_call(cid),),
            "structural",
            (command_id, file_id),
            "failed",
        ),
        EventFact(
            talk_event,
            project,
            "discussion",
            "Rounding agreed",
            "Half up, per the user",
            T0,
            cid,
            (message(cid, 0), message(cid, 1)),
            "semantic",
            (concept_id,),
            "ok",
        ),
    )
    return ResultDraft(
        result_id=result_id or str(uuid.uuid4()),
        run_id=run_id,
        scope_key="all" if project_id is None else f"project:{project_id}",
        project_id=project_id,
        time_from=T0 - timedelta(hours=1),
        time_to=T0 + timedelta(hours=3),
        trigger="manual",
        summary="Rounding fixed; one test still fails",
        change_digest="+3 entities, +2 events",
        coverage=Coverage(3, 3, 0, semantic="skipped", semantic_note="no model connection"),
        entities=entities,
        events=events,
        changes=(
            EntityChangeFact(
                file_id, "revised", "Rounding changed to half up", (message(cid, 1),), "semantic"
            ),
        ),
        relations=(
            RelationFact(command_id, file_id, "tests", reason, (tool_call(cid),), "structural"),
            RelationFact(
                concept_id,
                file_id,
                "relates_to",
                "app.py implements the rounding",
                (message(cid, 1),),
                "semantic",
            ),
        ),
        open_items=(
            OpenItemFact(
                f"failing:{command_id}",
                project,
                "pytest -q still fails",
                "1 failed",
                (tool_call(cid),),
                "structural",
                (command_id,),
            ),
        ),
        story_lines=(
            StoryLineFact(
                "conv",
                "Fix rounding",
                "The conversation",
                (talk_event, run_event),
                line_id(cid),
                must_exist=False,
            ),
            StoryLineFact(
                "tests",
                "Test runs",
                "Sub-thread: the test runs",
                (run_event,),
                parent_key="conv",
                must_exist=False,
            ),
        ),
        experiences=(
            ExperienceFact(
                "Run the tests after a rounding change",
                "A passing build hid the failure",
                (run_event,),
            ),
        ),
        checkpoints=tuple(
            Checkpoint(
                "structural",
                "all" if project_id is None else f"project:{project_id}",
                ref.source_type,
                ref.source_id,
                "f" * 32,
            )
            for ref in (message(cid, 0), message(cid, 1), message(cid, 2), tool_call(cid))
        ),
    )


def with_entity_name(draft: ResultDraft, entity_id: str, name: str) -> ResultDraft:
    """A copy of ``draft`` that proposes another name for one entity."""
    entities = tuple(
        dataclasses.replace(e, name=name) if e.entity_id == entity_id else e for e in draft.entities
    )
    return dataclasses.replace(draft, entities=entities)


def counts(store: SqlStore) -> dict[str, int]:
    """Rows per graph table."""
    with store._read() as c:
        return {
            name: int(
                c.execute(select(func.count()).select_from(t.metadata.tables[name])).scalar_one()
            )
            for name in GRAPH_TABLES
        }


def digest(store: SqlStore) -> str:
    """A digest of every graph table's content, ignoring when rows were written."""
    h = hashlib.blake2b(digest_size=16)
    with store._read() as c:
        for name in GRAPH_TABLES:
            table = t.metadata.tables[name]
            columns = [
                col
                for col in table.c
                if col.name not in _TIME_COLUMNS
                and col.name not in {"ref_id", "item_id", "edit_id"}
            ]
            rows = sorted(
                repr(tuple(_plain(v) for v in row)) for row in c.execute(select(*columns))
            )
            h.update(f"{name}:{len(rows)}\n".encode())
            for row in rows:
                h.update(row.encode())
    return h.hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return sorted((k, _plain(v)) for k, v in value.items() if k not in _TIME_COLUMNS)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
