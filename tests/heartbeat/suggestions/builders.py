"""Results to make suggestions from: reviews of the bundled examples, and hand-made graphs.

A reviewed store holds the structural result of ``examples/`` (open items such as
"pytest still failing", automatic entities cited by several sources). Hand-made drafts
add what the structural layer never produces (disagreements, revisions) through
``publish_result``, like the review pipeline would.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import insert

from proctor.graph import EntityFact, OpenItemFact, RelationFact, ResultDraft, SourceRef
from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.store import SqlStore
from proctor.store import _schema as t
from proctor.testing.scripted_model import RecordedRequest
from tests.builders import T0
from tests.conftest import EXAMPLES_DIR
from tests.store.graph_drafts import add_conversation, add_run, message, sample_draft, tool_call

CID = "test:conv-1"


def reviewed(store: SqlStore) -> str:
    """Ingest ``examples/`` and review it without a model; the result id."""
    store.set_setting("app.enabled", True)
    ingest(store, [EXAMPLES_DIR])
    run = start_review(store, ReviewRequest(), semantic=None)
    assert run.status == "completed", run.error
    assert run.result_id is not None
    return run.result_id


def publish(store: SqlStore, draft_of: Callable[[str, str], ResultDraft]) -> str:
    """Publish a hand-made draft in a fresh run; the result id."""
    project_id = add_conversation(store)
    run_id = str(uuid.uuid4())
    add_run(store, run_id, project_id)
    draft = draft_of(run_id, project_id)
    store.publish_result(draft, "completed")
    return draft.result_id


def _ids(draft: ResultDraft) -> tuple[str, str, str]:
    file_id, command_id, concept_id = (e.entity_id for e in draft.entities)
    return file_id, command_id, concept_id


def quiet(run_id: str, project_id: str) -> ResultDraft:
    """A result with nothing to suggest: no open item, no disagreement, no revision, and
    no entity with three sources."""
    return dataclasses.replace(sample_draft(run_id, project_id), open_items=(), changes=())


def disagreeing(
    run_id: str, project_id: str, *, supersede: bool = False, concept_sources: int = 1
) -> ResultDraft:
    """The sample graph plus a ``contrasts`` relation (and a ``supersedes`` one if asked);
    the concept cites ``concept_sources`` messages."""
    draft = sample_draft(run_id, project_id)
    file_id, _, concept_id = _ids(draft)
    relations = [
        *draft.relations,
        RelationFact(
            concept_id,
            file_id,
            "contrasts",
            "app.py still rounds half to even",
            (message(CID, 2),),
            "semantic",
        ),
    ]
    if supersede:
        relations.append(
            RelationFact(
                file_id, concept_id, "supersedes", "app.py now rounds half up", (), "semantic"
            )
        )
    entities = tuple(
        dataclasses.replace(e, sources=tuple(message(CID, i) for i in range(concept_sources)))
        if e.entity_id == concept_id
        else e
        for e in draft.entities
    )
    return dataclasses.replace(draft, relations=tuple(relations), entities=entities)


def citing(sources: Sequence[SourceRef]) -> Callable[[str, str], ResultDraft]:
    """A quiet result whose concept entity cites exactly ``sources``."""

    def draft_of(run_id: str, project_id: str) -> ResultDraft:
        draft = quiet(run_id, project_id)
        _, _, concept_id = _ids(draft)
        entities = tuple(
            dataclasses.replace(e, sources=tuple(sources)) if e.entity_id == concept_id else e
            for e in draft.entities
        )
        return dataclasses.replace(draft, entities=entities)

    return draft_of


def many_open_items(count: int) -> Callable[[str, str], ResultDraft]:
    """A result with ``count`` open items, each at its own time."""

    def draft_of(run_id: str, project_id: str) -> ResultDraft:
        draft = quiet(run_id, project_id)
        items = tuple(
            OpenItemFact(
                f"item:{n:02d}",
                project_id,
                f"Item {n:02d} still open",
                f"detail {n}",
                (tool_call(CID),),
                "structural",
            )
            for n in range(count)
        )
        return dataclasses.replace(draft, open_items=items)

    return draft_of


def with_entity(draft: ResultDraft, entity: EntityFact) -> ResultDraft:
    return dataclasses.replace(draft, entities=(*draft.entities, entity))


def add_heartbeat(store: SqlStore, result_id: str, status: str = "suggestions_failed") -> str:
    """A plan and one heartbeat run that published ``result_id``; the heartbeat id."""
    plan_id, heartbeat_id = uuid.uuid4().hex, uuid.uuid4().hex
    with store._write() as c:
        c.execute(
            insert(t.heartbeat_plans).values(
                plan_id=plan_id,
                name=f"plan-{plan_id[:6]}",
                project_id=None,
                scope_key="all",
                recurrence="daily",
                time_of_day="09:00",
                weekdays=[],
                timezone="UTC",
                enabled=True,
                intervention="suggest",
                window_hours=None,
                lease_attempt=0,
                created_at=T0,
                updated_at=T0,
            )
        )
        c.execute(
            insert(t.heartbeat_runs).values(
                heartbeat_id=heartbeat_id,
                plan_id=plan_id,
                due_at=T0,
                attempt=1,
                owner="test",
                status=status,
                phase="suggestions",
                result_id=result_id,
                error="the phrasing call failed",
                suggestions=0,
                started_at=T0,
                finished_at=T0 + timedelta(minutes=1),
            )
        )
    return heartbeat_id


def refs_of(request: RecordedRequest) -> list[str]:
    """The candidate refs a phrasing request offered, in order."""
    return [
        json.loads(line)["ref"] for line in request.text_of("user").splitlines() if '"ref"' in line
    ]


def phrase_all(request: RecordedRequest, **extra: Any) -> dict[str, Any]:
    """An answer phrasing every offered candidate."""
    return {
        "suggestions": [
            {"ref": ref, "title": f"Title {ref}", "text": f"Phrased {ref}."}
            for ref in refs_of(request)
        ],
        **extra,
    }
